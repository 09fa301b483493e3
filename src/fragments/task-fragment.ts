import type { ContextEntry, ProgressItem } from "../domain/types.js";
import type { Briefing } from "../service/briefing.js";
import type { FileSummary, ProgressSummary } from "../service/summaries.js";
import { field, oneLine, type TaskLike, taskLine } from "./text.js";

type TaskInput = TaskLike & { intent?: string | null; description?: string | null; plan?: string | null };

/**
 * One task as compact text for a system prompt. Given a task, it shows
 * the task line and its intent, description and plan; given an arbeit_task_get briefing, also the
 * sections it holds (context, progress, parent, children, blockers, files):
 *
 *   Task tkt-abc00002 [in_progress] Implement session timeout · parent tkt-abc00001
 *     intent: Users complaining sessions never expire
 *     context:
 *       - decision: Using localStorage for last-activity timestamp
 *     progress (1/2 done):
 *       [x] Create useIdleTimeout hook
 *       [ ] Add tests
 *
 * Pure: the same input always gives the same text.
 */
export function taskFragment(input: TaskInput | Briefing): string {
  const briefing: Partial<Briefing> = "task" in input ? input : {};
  const task: TaskInput = "task" in input ? input.task : input;
  const lines = [`Task ${taskLine(task)}`];
  for (const key of ["intent", "description", "plan"] as const) {
    const value = task[key];
    if (value) lines.push(field(key, value, "  "));
  }
  const context = briefing.context ?? briefing.context_all;
  if (context) append(lines, contextLines(context));
  if (briefing.progress) append(lines, progressLines(briefing.progress));
  else if (briefing.progress_summary) append(lines, summaryLines(briefing.progress_summary));
  if (briefing.parent !== undefined) lines.push(`  parent: ${briefing.parent ? taskLine(briefing.parent) : "none"}`);
  for (const [label, tasks] of [
    ["children", briefing.children],
    ["blocked by", briefing.blocked_by],
    ["blocking", briefing.blocking],
  ] as const) {
    if (tasks) append(lines, taskList(label, tasks));
  }
  if (briefing.files) lines.push(filesLine(briefing.files));
  return lines.join("\n");
}

/**
 * A briefing lists every child and dependant, however many: `push(...more)` would pass each as an
 * argument on the stack, and throws RangeError past about 125,000 of them.
 */
function append(lines: string[], more: readonly string[]): void {
  for (const line of more) lines.push(line);
}

function contextLines(entries: readonly ContextEntry[]): string[] {
  if (entries.length === 0) return ["  context: none"];
  return [
    "  context:",
    ...entries.map((entry) =>
      field(
        `- ${entry.type}${entry.superseded_by ? ` (superseded by ${entry.superseded_by})` : ""}`,
        entry.content,
        "    ",
      ),
    ),
  ];
}

function progressLines(items: readonly ProgressItem[]): string[] {
  const done = items.filter((item) => item.completed).length;
  if (items.length === 0) return ["  progress: none"];
  return [
    `  progress (${done}/${items.length} done):`,
    ...items.map((item) => `    [${item.completed ? "x" : " "}] ${oneLine(item.content)}`),
  ];
}

function summaryLines(summary: ProgressSummary): string[] {
  if (summary.total === 0) return ["  progress: none"];
  return [
    `  progress (${summary.completed}/${summary.total} done)${summary.remaining > 0 ? ", remaining:" : ""}`,
    // Ids, so that the agent can mark a step done without another call.
    ...summary.remaining_items.map((item) => `    [ ] ${oneLine(item.content)} (${item.id})`),
  ];
}

function taskList(label: string, tasks: readonly TaskLike[]): string[] {
  if (tasks.length === 0) return [`  ${label}: none`];
  return [`  ${label}:`, ...tasks.map((task) => `    - ${taskLine(task)}`)];
}

function filesLine(files: readonly FileSummary[]): string {
  if (files.length === 0) return "  files: none";
  return `  files: ${files.map((file) => `${file.file_path} (${file.operations.join(", ")})`).join(", ")}`;
}
