import type { Task } from "./types.js";

/**
 * Claims: a session holds a task while its lease is live; an expired lease frees it. Leases are
 * compared with the database's time, never a client's.
 */
export const DEFAULT_LEASE_SECONDS = 15 * 60;
export const MAX_LEASE_SECONDS = 7 * 24 * 60 * 60;

export type LeaseState = "free" | "mine" | "other";

/** Whether the task is free, held by `session`, or held by another session at `now`. */
export function leaseState(
  task: Pick<Task, "claim_session" | "lease_expires_at">,
  session: string,
  now: string,
): LeaseState {
  if (task.claim_session === null || task.lease_expires_at === null || task.lease_expires_at <= now) return "free";
  return task.claim_session === session ? "mine" : "other";
}

/** True while some session holds a live lease on the task. */
export function isHeld(task: Pick<Task, "claim_session" | "lease_expires_at">, now: string): boolean {
  return task.claim_session !== null && task.lease_expires_at !== null && task.lease_expires_at > now;
}

export function leaseUntil(now: Date, seconds: number): string {
  return new Date(now.getTime() + seconds * 1000).toISOString();
}
