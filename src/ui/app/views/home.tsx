/**
 * The home view, `/`: what needs a person first (open questions, stale claims, sessions that
 * stopped with their task unfinished, attempts piling up), then who works on what now, then how
 * the work goes (each epic's completion, and work done per day as a small chart).
 */
import type { ComponentChildren } from "preact";
import type { HomeView, Me } from "../../contract.js";
import { getJson } from "../api.js";
import { Countdown, ErrorAlert, Progress, StatusBadge, setServerNow, When } from "../common.js";
import { useResource } from "../live.js";
import { NotifyToggle } from "../notify.js";
import { BreakClaim } from "./agents.js";
import { Collisions } from "./collisions.js";

function Panel({ title, count, children }: { title: string; count?: number; children: ComponentChildren }) {
  const id = `home-${title.toLowerCase().replace(/[^a-z]+/g, "-")}`;
  return (
    <section class="panel" aria-labelledby={id}>
      <h2 id={id}>
        {title}
        {count !== undefined && <span class={count > 0 ? "count alert-count" : "count"}>{count}</span>}
      </h2>
      {children}
    </section>
  );
}

const TaskLink = ({ id, title }: { id: string; title: string }) => (
  <a href={`/task/${id}`} data-nav-item>
    {title}
  </a>
);

function Attention({ data, editable, reload }: { data: HomeView; editable: boolean; reload: () => unknown }) {
  const { questions, stale_claims, stopped, attempts, webhooks } = data.attention;
  const count = questions.length + stale_claims.length + stopped.length + attempts.length + webhooks.length;
  return (
    <Panel title="Needs you" count={count}>
      {count === 0 && <p class="muted">Nothing needs you now.</p>}
      <ul class="plain-list attention">
        {questions.map(({ entry, task, asked_by }) => (
          <li key={entry.id} class="question" data-entry-id={entry.id} data-task-id={task.id}>
            <span class="badge blocked">question</span> <TaskLink id={task.id} title={task.title} />
            <span class="asked">{entry.content}</span>
            <span class="muted small">
              {asked_by.agent ?? "an agent"}, <When at={entry.created_at} /> · <a href="/inbox">answer in the inbox</a>
            </span>
          </li>
        ))}
        {stale_claims.map((claim) => (
          <li key={`stale-${claim.task_id}`} data-task-id={claim.task_id}>
            <span class="badge warn">stale claim</span> <TaskLink id={claim.task_id} title={claim.title} />
            <span class="muted small">
              {claim.owner ?? "?"}'s lease ran out <When at={claim.until} />
            </span>
            {editable && <BreakClaim taskId={claim.task_id} after={reload} />}
          </li>
        ))}
        {stopped.map((stop) => (
          <li key={`stopped-${stop.session_id}-${stop.task_id}`} data-task-id={stop.task_id}>
            <span class="badge warn">stopped</span> <TaskLink id={stop.task_id} title={stop.title} />{" "}
            <StatusBadge status={stop.status} />
            <span class="muted small">
              {stop.agent ?? "an agent"} (session <code>{stop.session_id}</code>) stopped <When at={stop.stopped_at} />,
              nobody works on it now
            </span>
          </li>
        ))}
        {attempts.map((task) => (
          <li key={`attempts-${task.task_id}`} data-task-id={task.task_id}>
            <span class="badge warn">{task.attempts} attempts</span> <TaskLink id={task.task_id} title={task.title} />
            <span class="muted small">
              the last <When at={task.last_at} />
            </span>
          </li>
        ))}
        {webhooks.map((webhook) => (
          <li key={`webhook-${webhook.id}`} data-webhook-id={webhook.id}>
            <span class="badge warn">webhook failing</span> <code>{webhook.url}</code>
            <span class="muted small">
              {webhook.last_failure}, <When at={webhook.last_failure_at} /> · <code>arbeit notify list</code>
            </span>
          </li>
        ))}
      </ul>
    </Panel>
  );
}

function WorkingNow({ sessions }: { sessions: HomeView["sessions"] }) {
  return (
    <Panel title="Working now" count={sessions.length}>
      {sessions.length === 0 ? (
        <p class="muted">No session is working now.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Session</th>
              <th>Task</th>
              <th>Last step</th>
              <th>Lease</th>
            </tr>
          </thead>
          <tbody>
            {sessions.map((session) => {
              const task = session.working ?? session.claims[0] ?? null;
              const lease = session.claims.find((claim) => claim.task_id === task?.task_id) ?? session.claims[0];
              return (
                <tr key={session.session_id} data-session-id={session.session_id}>
                  <td>
                    <code>{session.session_id}</code> <span class="owner">{session.agent ?? ""}</span>
                  </td>
                  <td>{task ? <TaskLink id={task.task_id} title={task.title} /> : <span class="muted">none</span>}</td>
                  <td>
                    {session.last_activity ? (
                      <>
                        {session.last_activity.event_type} <When at={session.last_activity.at} />
                      </>
                    ) : (
                      <span class="muted">none</span>
                    )}
                  </td>
                  <td>{lease ? <Countdown until={lease.until} /> : <span class="muted">no claim</span>}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </Panel>
  );
}

const SERIES = [
  { key: "completed", label: "tasks completed" },
  { key: "decisions", label: "decisions" },
  { key: "blockers", label: "blockers" },
] as const;

/** Work per day as grouped bars: a small SVG drawn here, with the numbers in a table for screen readers. */
function DailyChart({ days }: { days: HomeView["days"] }) {
  const width = 560;
  const height = 120;
  const top = Math.max(1, ...days.flatMap((day) => SERIES.map(({ key }) => day[key])));
  const slot = width / days.length;
  const bar = Math.max(2, (slot - 6) / SERIES.length);
  return (
    <figure class="daily">
      <svg viewBox={`0 0 ${width} ${height + 16}`} role="img" aria-label="Work per day, the last two weeks">
        {days.map((day, i) => (
          <g key={day.day}>
            {SERIES.map(({ key, label }, s) => {
              const h = (day[key] / top) * height;
              return (
                <rect
                  key={key}
                  class={`series-${key}`}
                  x={i * slot + 3 + s * bar}
                  y={height - h}
                  width={bar - 1}
                  height={h}
                >
                  <title>{`${day.day}: ${day[key]} ${label}`}</title>
                </rect>
              );
            })}
            {(days.length - 1 - i) % 2 === 0 && (
              <text x={i * slot + slot / 2} y={height + 13} text-anchor="middle">
                {day.day.slice(5)}
              </text>
            )}
          </g>
        ))}
      </svg>
      <figcaption>
        {SERIES.map(({ key, label }) => (
          <span key={key} class="series-legend">
            <span class={`swatch series-${key}`} aria-hidden="true" />
            {days.reduce((sum, day) => sum + day[key], 0)} {label}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}

function ProgressPanel({ data }: { data: HomeView }) {
  return (
    <Panel title="Progress">
      {data.epics.length === 0 ? (
        <p class="muted">No epics yet.</p>
      ) : (
        <ul class="plain-list epics">
          {data.epics.map((epic) => (
            <li key={epic.id} data-task-id={epic.id}>
              <TaskLink id={epic.id} title={epic.title} /> <StatusBadge status={epic.status} />{" "}
              {epic.total === 0 ? (
                <span class="muted small">no subtasks</span>
              ) : (
                <Progress done={epic.done} total={epic.total} label={`Completion of ${epic.title}`} />
              )}
            </li>
          ))}
        </ul>
      )}
      <DailyChart days={data.days} />
    </Panel>
  );
}

export function HomePage({ me }: { me: Me | undefined }) {
  const home = useResource("home", async () => {
    const view = await getJson<HomeView>("/api/home");
    setServerNow(view.now);
    return view;
  });
  const data = home.data;
  const editable = me !== undefined && !me.read_only;
  return (
    <section data-view="home" class="view">
      <div class="toolbar">
        <h1>Home</h1>
        <span class="spacer" />
        <NotifyToggle />
      </div>
      <ErrorAlert error={home.error} onReload={home.reload} />
      {!data && !home.error && <p class="muted">Loading…</p>}
      {data && (
        <div class="home">
          <Attention data={data} editable={editable} reload={() => void home.reload()} />
          <Collisions rows={data.collisions} />
          <WorkingNow sessions={data.sessions} />
          <ProgressPanel data={data} />
        </div>
      )}
    </section>
  );
}
