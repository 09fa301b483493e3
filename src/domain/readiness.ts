import { isHeld } from "./claims.js";
import type { Task } from "./types.js";

/**
 * Why a task is or is not ready for a caller: ready = open, not blocked, not deleted, no
 * unfinished children (a parent's work is its children), no live claim by another session, and not assigned to another agent (an owner without a live claim is
 * an assignment). Deleted tasks never reach here (they are not found at all).
 */
export function readinessReasons(
  task: Pick<Task, "status" | "blocked" | "blocked_by" | "owner" | "lease_expires_at" | "claim_session">,
  now: string,
  unfinishedBlockers: readonly string[],
  who: { session: string; agent: string | null },
  unfinishedChildren: readonly string[] = [],
): string[] {
  const reasons: string[] = [];
  if (task.status !== "open") reasons.push(`status is ${task.status}, not open`);
  if (task.blocked) reasons.push(`blocked by unfinished ${unfinishedBlockers.join(", ")}`);
  if (unfinishedChildren.length > 0) reasons.push(`waits on its unfinished children ${unfinishedChildren.join(", ")}`);
  if (isHeld(task, now)) {
    if (task.claim_session !== who.session) reasons.push(`claimed by ${task.owner} until ${task.lease_expires_at}`);
  } else if (task.owner !== null && task.owner !== who.agent) {
    reasons.push(`assigned to ${task.owner}`);
  }
  return reasons;
}

export const READY_BECAUSE = "open, no unfinished blockers or children, not claimed or assigned by anyone else";
