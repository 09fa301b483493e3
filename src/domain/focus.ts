import { isHeld } from "./claims.js";
import { isTerminal, type Task } from "./types.js";

/**
 * Which task a session resumes, first match wins: the focus it had, if the session still works
 * on it; else the task start_work last moved it to; else its live claim; else a task assigned to
 * its agent; else the best ready task in scope; else nothing. Finished tasks are passed over, and
 * so is any task another session holds: that one is theirs.
 */
export type FocusReason = "kept_focus" | "last_started" | "claimed" | "assigned" | "best_ready" | "none";

export interface FocusCandidates {
  session: string;
  /** The database's time, for telling live claims from expired ones. */
  now: string;
  /** The focus the session had at its last resume or start_work. */
  previous: Task | undefined;
  /** The task the session works on now, if any. */
  working: Task | undefined;
  /** The task start_work last moved the session to, whether or not it still works on it. */
  lastStarted: Task | undefined;
  /** The session's live claims, most recent first. */
  claims: readonly Task[];
  /** Unfinished tasks assigned to the session's agent, best first. */
  assigned: readonly Task[];
  ready: readonly Task[];
}

export function selectFocus(c: FocusCandidates): { task: Task | null; reason: FocusReason } {
  const usable = (task: Task | undefined): task is Task =>
    task !== undefined && !isTerminal(task.status) && !(isHeld(task, c.now) && task.claim_session !== c.session);
  if (usable(c.previous) && c.working?.id === c.previous.id) return { task: c.previous, reason: "kept_focus" };
  if (usable(c.lastStarted)) return { task: c.lastStarted, reason: "last_started" };
  const claim = c.claims.find(usable);
  if (claim) return { task: claim, reason: "claimed" };
  const assigned = c.assigned.find(usable);
  if (assigned) return { task: assigned, reason: "assigned" };
  const best = c.ready[0];
  if (best) return { task: best, reason: "best_ready" };
  return { task: null, reason: "none" };
}
