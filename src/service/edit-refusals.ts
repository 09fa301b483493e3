import { type EditCheck, holderOf } from "../domain/reservations.js";
import type { ArbeitEvent } from "../domain/types.js";
import type { StoreTx } from "../store/task-store.js";
import type { Caller } from "./caller.js";
import { mutate, type ServiceDeps } from "./operation.js";

/**
 * A refused edit leaves a trace: an `edit_refused` event names who was refused (its session and
 * agent), which file, and whose reservation refused it (its id, pattern, holder and task). A
 * session that retries the same file against the same reservation is recorded once: an event per
 * (session, reservation, path), so a retry storm writes nothing more. When that reservation ends
 * (released, or recorded as expired), the refused session's next step is told the file is free
 * (freedNews), once.
 */

/** The most refused paths one check records: a shell command may name many files. */
const PATHS_RECORDED = 20;
/** The refusals of one reservation read to find a session's earlier one. */
const REFUSALS_READ = 500;

type Refused = EditCheck["conflicts"][number];

/** The exclusive conflicts of a denied check, one per path. */
function refusedOf(check: EditCheck): Refused[] {
  const seen = new Set<string>();
  return check.conflicts.filter((c) => {
    if (c.mode !== "exclusive" || seen.has(c.path)) return false;
    seen.add(c.path);
    return true;
  });
}

async function unrecorded(tx: StoreTx, session: string, refused: Refused[]): Promise<Refused[]> {
  const earlier = await Promise.all(refused.map((c) => tx.editRefusals(c.id, REFUSALS_READ)));
  const known = (events: ArbeitEvent[], path: string) =>
    events.some((event) => event.session_id === session && event.payload.path === path);
  return refused.filter((c, i) => !known(earlier[i]!, c.path));
}

/**
 * Records the refusal of a denied edit check for the caller, once per (session, reservation,
 * path). Reads first: a retry already recorded takes no write lock.
 */
export async function recordEditRefused(
  deps: ServiceDeps,
  check: EditCheck,
  caller: Caller & { session: string },
): Promise<number> {
  const refused = refusedOf(check).slice(0, PATHS_RECORDED);
  if (refused.length === 0) return 0;
  const fresh = await deps.store.read((tx) => unrecorded(tx, caller.session, refused));
  if (fresh.length === 0) return 0;
  return mutate(deps, caller, async (w) => {
    // Again under the session's write turn: a step that ran meanwhile may have recorded it.
    const missing = await unrecorded(w.tx, w.session, fresh);
    // The session's news must start no later than its refusal, or the file's end is never told:
    // a session that never looked (a host that keeps no cursor) starts looking here.
    const [state, seq] = await Promise.all([w.tx.sessionState(w.session), w.tx.maxEventSeq()]);
    if (missing.length > 0 && state === undefined)
      await w.tx.saveSessionState(w.session, { agent: w.caller.agent, cursor_seq: seq, focus_task_id: null }, w.now);
    for (const c of missing)
      await w.emit({
        event_type: "edit_refused",
        entity_type: "reservation",
        entity_id: c.id,
        task_id: null,
        payload: {
          path: c.path,
          pattern: c.pattern,
          holder: { session: c.session, agent: c.agent, task_id: c.task_id },
          until: c.until,
        },
      });
    return missing.length;
  });
}

/** The line a refused session is told when the reservation that refused it ended. */
export function freedText(refused: Record<string, unknown>): string {
  const holder = (refused.holder ?? {}) as { session?: string; agent?: string | null; task_id?: string | null };
  const who = holderOf({
    agent: holder.agent ?? null,
    session: holder.session ?? "?",
    task_id: holder.task_id ?? null,
  });
  return `${String(refused.path)} is free now (was held by ${who}): you may come back to the edit that was refused.`;
}
