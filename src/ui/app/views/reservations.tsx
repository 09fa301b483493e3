/** Live file reservations beside the claims: who holds which files, until when; a person may break one. */
import type { Me, ReservationRow } from "../../contract.js";
import { callTool } from "../api.js";
import { Countdown, ErrorAlert, Section, useAction } from "../common.js";
import { useResource } from "../live.js";

/** Releases another session's reservation of `pattern` (forced, logged with the holder named). */
export function BreakReservation({ pattern, after }: { pattern: string; after: () => unknown }) {
  const action = useAction();
  return (
    <>
      <button
        type="button"
        class="danger"
        disabled={action.busy}
        aria-label={`Break reservation of ${pattern}`}
        onClick={async () => {
          if (
            await action.run(() => callTool("arbeit_task_claim", { action: "release", paths: [pattern], force: true }))
          )
            after();
        }}
      >
        Break reservation
      </button>
      <ErrorAlert error={action.error} onDismiss={action.clear} />
    </>
  );
}

export function ReservationsSection({ me }: { me: Me | undefined }) {
  const reservations = useResource("reservations", async () =>
    callTool<{ reservations: ReservationRow[] }>("arbeit_query", { query: "reservations" }),
  );
  const rows = reservations.data?.reservations ?? [];
  const editable = me !== undefined && !me.read_only;
  return (
    <Section title="File reservations" count={reservations.data ? rows.length : undefined}>
      <ErrorAlert error={reservations.error} onReload={reservations.reload} />
      {reservations.data && rows.length === 0 && <p class="muted">No file is reserved.</p>}
      {rows.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>Files</th>
              <th>Mode</th>
              <th>Holder</th>
              <th>Task</th>
              <th>Lease</th>
              {editable && <th>Action</th>}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.id} data-reservation-id={row.id} data-pattern={row.pattern}>
                <td>
                  <code>{row.pattern}</code>
                </td>
                <td>{row.mode}</td>
                <td>
                  {row.agent ?? <span class="muted">unknown</span>} <code class="muted">{row.session}</code>
                </td>
                <td>
                  {row.task_id ? <a href={`/task/${row.task_id}`}>{row.task_id}</a> : <span class="muted">none</span>}
                </td>
                <td>
                  <Countdown until={row.until} />
                </td>
                {editable && (
                  <td>
                    <BreakReservation pattern={row.pattern} after={reservations.reload} />
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}
