import { isTerminal, type Task, type Warning } from "../domain/types.js";
import type { RelationshipRow, StoreTx } from "../store/task-store.js";
import type { ServiceDeps } from "./operation.js";

/** Context older than this without anything newer is flagged as stale (STALE_CONTEXT). */
export const STALE_CONTEXT_DAYS = 7;
const DAY_MS = 86_400_000;

export async function staleContextWarning(
  tx: StoreTx,
  deps: ServiceDeps,
  taskId: string,
): Promise<Warning | undefined> {
  const live = await tx.contextOf(taskId, false);
  if (live.length === 0) return undefined;
  const newest = live
    .map((entry) => entry.created_at)
    .sort()
    .at(-1)!;
  const ageDays = (deps.nowDate().getTime() - Date.parse(newest)) / DAY_MS;
  if (ageDays < STALE_CONTEXT_DAYS) return undefined;
  return {
    code: "STALE_CONTEXT",
    message: `The newest context on ${taskId} is ${Math.floor(ageDays)} days old; check it still holds and supersede what does not.`,
  };
}

export function orphanWarning(taskId: string, relationships: RelationshipRow[]): Warning | undefined {
  const orphans = relationships.filter((rel) => rel.other_deleted);
  if (orphans.length === 0) return undefined;
  return {
    code: "ORPHAN_RELATIONSHIPS",
    message: `${taskId} has ${orphans.length} relationship(s) to deleted tasks (${orphans.map((r) => r.id).join(", ")}); remove each with arbeit_relationship {action: remove, from_task_id, to_task_id, type}.`,
  };
}

/**
 * Work is starting on a task something unfinished still blocks: a warning, never an error. Only
 * the unfinished blockers are named; a completed or cancelled one no longer stands in the way.
 */
export async function blockersWarning(tx: StoreTx, task: Task): Promise<Warning | undefined> {
  if (!task.blocked) return undefined;
  const unfinished = (await tx.blockers(task.id)).filter((blocker) => !isTerminal(blocker.status));
  if (unfinished.length === 0) return undefined;
  return {
    code: "HAS_BLOCKERS",
    message: `${task.id} is still blocked by unfinished work (${unfinished.map((b) => b.id).join(", ")}); check it before going on.`,
  };
}

/** A secret of Arbeit's was cut out of what the call stored: it was shown where it does not belong. */
export function secretRedacted(): Warning {
  return {
    code: "SECRET_REDACTED",
    message:
      "The call's text held an Arbeit secret (an arb_ token, a whsec_ webhook secret or an arbui_ dashboard token); it was stored as arb_[redacted] (and so on). Treat it as leaked: a person should revoke the token (arbeit token revoke), replace the webhook or restart arbeit ui.",
  };
}
