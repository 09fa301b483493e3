import type { Task } from "./types.js";

/**
 * Deterministic focus selection for resume: keep the agent's in-progress focus;
 * else the task its session is working on; else its most recently claimed live task; else the
 * best ready task in scope; else nothing.
 */
export type FocusReason = "kept_in_progress_focus" | "active_work" | "claimed" | "best_ready" | "none";

export interface FocusCandidates {
  previous: Task | undefined;
  activeWork: Task | undefined;
  claims: readonly Task[];
  ready: readonly Task[];
}

export function selectFocus(candidates: FocusCandidates): { task: Task | null; reason: FocusReason } {
  const { previous, activeWork, claims, ready } = candidates;
  if (previous && previous.status === "in_progress") return { task: previous, reason: "kept_in_progress_focus" };
  if (activeWork && activeWork.status !== "completed" && activeWork.status !== "cancelled") {
    return { task: activeWork, reason: "active_work" };
  }
  const claim = claims.find((task) => task.status === "open" || task.status === "in_progress");
  if (claim) return { task: claim, reason: "claimed" };
  const best = ready[0];
  if (best) return { task: best, reason: "best_ready" };
  return { task: null, reason: "none" };
}
