import type { ArbeitEvent, Task } from "./types.js";

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

/**
 * Whether `session` still counts as the holder of a claim it no longer has, from the task's
 * claim history (newest first): it took or renewed the claim, and its last word on it since is
 * not its own letting go. A claim that ran out or that a person broke was taken from it, not
 * given back; releasing it, stopping work on the task or finishing the task lets go.
 */
export function claimTakenFrom(
  history: readonly Pick<ArbeitEvent, "event_type" | "session_id" | "payload">[],
  session: string,
): boolean {
  for (const event of history) {
    const { payload } = event;
    switch (event.event_type) {
      case "task_claimed":
      case "claim_renewed":
        if (event.session_id === session) return true;
        break;
      case "claim_expired":
        if (payload.session === session) return true;
        break;
      case "claim_released":
        if (payload.reason === "forced" && payload.session === session) return true;
        if (payload.reason !== "forced" && event.session_id === session) return false;
        break;
      case "work_stopped":
        if (payload.session_id === session) return false;
        break;
    }
  }
  return false;
}

/**
 * A live conversation's heartbeat. The process that lives exactly as long as a conversation (the
 * MCP server a host starts for it, the OpenCode plugin in the host's process) beats for its
 * sessions every third of HEARTBEAT_SECONDS; each beat makes every claim and file reservation of
 * the session run until HEARTBEAT_SECONDS from then, however long one tool call takes. When the
 * process ends or dies the beats stop, and the claims lapse within HEARTBEAT_SECONDS.
 */
export const DEFAULT_HEARTBEAT_SECONDS = 60;
export const MAX_HEARTBEAT_SECONDS = 60 * 60;

/**
 * The heartbeat length a process uses, from ARBEIT_HEARTBEAT_SECONDS (meant for tests, which
 * cannot wait a minute): a whole number of seconds from 1 to MAX_HEARTBEAT_SECONDS, or 0 for no
 * heartbeat at all (the conversation's claims keep plain lease rules). Anything else: the default.
 */
export function heartbeatSeconds(setting: string | undefined): number {
  if (setting === undefined || !/^\d{1,7}$/.test(setting.trim())) return DEFAULT_HEARTBEAT_SECONDS;
  const seconds = Number(setting.trim());
  return seconds <= MAX_HEARTBEAT_SECONDS ? seconds : DEFAULT_HEARTBEAT_SECONDS;
}

/** How often a process beats: three beats within one heartbeat length, so one late beat loses nothing. */
export function beatIntervalMs(seconds: number): number {
  return Math.max(1, Math.floor((seconds * 1000) / 3));
}
