/** Who is working now: sessions, their work and claims (leases counting down), stale claims to break. */
import type { AgentsView, Me } from "../../contract.js";
import { callTool, getJson } from "../api.js";
import { Countdown, ErrorAlert, Section, setServerNow, useAction, When } from "../common.js";
import { useResource } from "../live.js";
import { ReservationsSection } from "./reservations.js";

export function BreakClaim({ taskId, after }: { taskId: string; after: () => unknown }) {
  const action = useAction();
  return (
    <>
      <button
        type="button"
        class="danger"
        disabled={action.busy}
        aria-label={`Break claim on ${taskId}`}
        onClick={async () => {
          if (
            await action.run(() => callTool("arbeit_task_claim", { action: "release", task_id: taskId, force: true }))
          )
            after();
        }}
      >
        Break claim
      </button>
      <ErrorAlert error={action.error} onDismiss={action.clear} />
    </>
  );
}

export function AgentsPage({ me }: { me: Me | undefined }) {
  const agents = useResource("agents", async () => {
    const view = await getJson<AgentsView>("/api/agents");
    setServerNow(view.now);
    return view;
  });
  const data = agents.data;
  const editable = me !== undefined && !me.read_only;
  return (
    <section data-view="agents" class="view">
      <div class="toolbar">
        <h1>Agents</h1>
      </div>
      <ErrorAlert error={agents.error} onReload={agents.reload} />
      {!data && !agents.error && <p class="muted">Loading…</p>}
      {data && (
        <>
          <Section title="Sessions" count={data.sessions.length}>
            {data.sessions.length === 0 ? (
              <p class="muted">No session is working now.</p>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th>Session</th>
                    <th>Agent</th>
                    <th>Working on</th>
                    <th>Claims</th>
                    <th>Last activity</th>
                  </tr>
                </thead>
                <tbody>
                  {data.sessions.map((session) => (
                    <tr key={session.session_id} data-session-id={session.session_id}>
                      <td>
                        <code>{session.session_id}</code>
                      </td>
                      <td>{session.agent ?? <span class="muted">unknown</span>}</td>
                      <td>
                        {session.working ? (
                          <span data-task-id={session.working.task_id}>
                            <a href={`/task/${session.working.task_id}`} data-nav-item>
                              {session.working.title}
                            </a>{" "}
                            <code class="muted">{session.working.task_id}</code>
                            <div class="muted small">
                              since <When at={session.working.since} />
                            </div>
                          </span>
                        ) : (
                          <span class="muted">nothing</span>
                        )}
                      </td>
                      <td>
                        <ul class="plain-list">
                          {session.claims.map((claim) => (
                            <li key={claim.task_id} data-task-id={claim.task_id}>
                              <a href={`/task/${claim.task_id}`}>{claim.title}</a> <Countdown until={claim.until} />
                            </li>
                          ))}
                        </ul>
                        {session.claims.length === 0 && <span class="muted">none</span>}
                      </td>
                      <td>
                        {session.last_activity ? (
                          <>
                            {session.last_activity.event_type} <When at={session.last_activity.at} />
                            {session.last_activity.task_id && (
                              <>
                                {" "}
                                on{" "}
                                <a href={`/task/${session.last_activity.task_id}`}>{session.last_activity.task_id}</a>
                              </>
                            )}
                          </>
                        ) : (
                          <span class="muted">none</span>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </Section>
          <ReservationsSection me={me} />
          <Section title="Stale claims" count={data.stale_claims.length}>
            {data.stale_claims.length === 0 ? (
              <p class="muted">No stale claims.</p>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th>Task</th>
                    <th>Owner</th>
                    <th>Session</th>
                    <th>Lease</th>
                    {editable && <th>Action</th>}
                  </tr>
                </thead>
                <tbody>
                  {data.stale_claims.map((claim) => (
                    <tr key={claim.task_id} data-task-id={claim.task_id} class="stale-claim">
                      <td>
                        <a href={`/task/${claim.task_id}`} data-nav-item>
                          {claim.title}
                        </a>{" "}
                        <code class="muted">{claim.task_id}</code>
                      </td>
                      <td>{claim.owner ?? <span class="muted">none</span>}</td>
                      <td>{claim.session ? <code>{claim.session}</code> : <span class="muted">none</span>}</td>
                      <td>
                        <Countdown until={claim.until} />
                      </td>
                      {editable && (
                        <td>
                          <BreakClaim taskId={claim.task_id} after={agents.reload} />
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </Section>
        </>
      )}
    </section>
  );
}
