import type { Task } from "./types.js";

/**
 * Why a task is or is not ready: ready = open, not blocked, not deleted, not held
 * under a live lease. Deleted tasks never reach here (they are not found at all).
 */
export function readinessReasons(
  task: Pick<Task, "status" | "blocked" | "blocked_by" | "owner" | "lease_expires_at">,
  now: string,
  unfinishedBlockers: readonly string[],
): string[] {
  const reasons: string[] = [];
  if (task.status !== "open") reasons.push(`status is ${task.status}, not open`);
  if (task.blocked) reasons.push(`blocked by unfinished ${unfinishedBlockers.join(", ")}`);
  if (task.owner !== null && task.lease_expires_at !== null && task.lease_expires_at > now) {
    reasons.push(`claimed by ${task.owner} until ${task.lease_expires_at}`);
  }
  return reasons;
}

export const READY_BECAUSE = "open, no unfinished blockers, no live claim";
