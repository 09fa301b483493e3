import { type TaskLike, taskLine } from "./text.js";

/**
 * A list of tasks as compact text for a system prompt, one line each:
 *
 *   Tasks (2):
 *   - tkt-abc00001 [open] Auth Security Improvements · epic
 *   - tkt-abc00002 [in_progress] Implement session timeout · parent tkt-abc00001
 *
 * Takes full tasks or the summaries listings return; heavy text fields are never shown here.
 */
export function tasksFragment(tasks: readonly TaskLike[], options: { heading?: string } = {}): string {
  const heading = options.heading ?? "Tasks";
  if (tasks.length === 0) return `${heading}: none.`;
  return [`${heading} (${tasks.length}):`, ...tasks.map((task) => `- ${taskLine(task)}`)].join("\n");
}
