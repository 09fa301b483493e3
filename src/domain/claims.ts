import type { Task } from "./types.js";

/** Claims: `owner` holds a task while its lease is live; an expired lease frees it. */
export const DEFAULT_LEASE_SECONDS = 15 * 60;
export const MAX_LEASE_SECONDS = 7 * 24 * 60 * 60;

export type LeaseState = "free" | "mine" | "other";

export function leaseState(task: Pick<Task, "owner" | "lease_expires_at">, agent: string, now: string): LeaseState {
  if (task.owner === null || task.lease_expires_at === null || task.lease_expires_at <= now) return "free";
  return task.owner === agent ? "mine" : "other";
}

export function leaseUntil(now: Date, seconds: number): string {
  return new Date(now.getTime() + seconds * 1000).toISOString();
}
