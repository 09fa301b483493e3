import type { Task } from "../domain/types.js";
import type { ArbeitService } from "./arbeit-service.js";
import type { Briefing } from "./briefing.js";

/**
 * The briefing a host injects into a model's context (OpenCode compaction, Claude Code session
 * start and pre-compact): the task, its live context, progress and files, as compact text with
 * every part bounded so a long-lived task cannot flood the window.
 */

const FIELD_CHARS = 1_500;
const ENTRY_CHARS = 600;
const MAX_CONTEXT = 12;
const MAX_STEPS = 15;
const MAX_FILES = 20;

function clip(text: string, max: number): string {
  const flat = text.trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

function oneLine(text: string, max: number): string {
  return clip(text.replace(/\s+/g, " "), max);
}

function header(task: Task): string {
  const facts = [
    task.status,
    task.type,
    `priority ${task.priority}`,
    task.blocked ? `blocked by ${task.blocked_by.join(", ")}` : null,
    task.parent_id ? `parent ${task.parent_id}` : null,
  ].filter(Boolean);
  return `${task.id} "${task.title}" (${facts.join(", ")})`;
}

function sections(briefing: Briefing): string[] {
  const { task } = briefing;
  const out: string[] = [];
  for (const [label, value] of [
    ["Intent", task.intent],
    ["Description", task.description],
    ["Plan", task.plan],
  ] as const) {
    if (value) out.push(`${label}: ${clip(value, FIELD_CHARS)}`);
  }
  const context = briefing.context ?? [];
  if (context.length > 0) {
    const shown = context.slice(-MAX_CONTEXT);
    const older = context.length - shown.length;
    out.push(
      `Context${older > 0 ? ` (latest ${shown.length} of ${context.length})` : ""}:`,
      ...shown.map((entry) => `- [${entry.type}] ${oneLine(entry.content, ENTRY_CHARS)}`),
    );
  }
  const progress = briefing.progress_summary;
  if (progress && progress.total > 0) {
    out.push(`Progress: ${progress.completed}/${progress.total} steps done.`);
    const remaining = progress.remaining_items.slice(0, MAX_STEPS);
    if (remaining.length > 0) {
      out.push(
        "Remaining steps:",
        ...remaining.map((item) => `- ${oneLine(item.content, ENTRY_CHARS)} (${item.id})`),
        ...(progress.remaining > remaining.length ? [`- … ${progress.remaining - remaining.length} more`] : []),
      );
    }
  }
  const files = briefing.files ?? [];
  if (files.length > 0) {
    const shown = files.slice(0, MAX_FILES).map((file) => `${file.file_path} (${file.operations.join("+")})`);
    out.push(
      `Files: ${shown.join(", ")}${files.length > shown.length ? `, … ${files.length - shown.length} more` : ""}`,
    );
  }
  return out;
}

/** The task's briefing under a heading that says how it relates to the session. */
export async function briefingText(service: ArbeitService, taskId: string, heading: string): Promise<string> {
  const { data } = await service.getTask({ task_id: taskId, include: ["context", "progress_summary", "files"] });
  return [`${heading}: ${header(data.task)}`, ...sections(data)].join("\n");
}

/** The task the session is working on (arbeit_task_start_work), if any and not deleted since. */
export async function activeTaskId(service: ArbeitService, session: string): Promise<string | undefined> {
  return service.store.read(async (tx) => {
    const active = await tx.activeWork(session);
    if (!active) return undefined;
    return (await tx.getTask(active.task_id))?.id;
  });
}

export const KEEP_CURRENT =
  "Keep it current: arbeit_context_add for decisions, attempts and outcomes; arbeit_progress_complete for finished steps.";

/** The briefing of the session's active task, or undefined when it has none. */
export async function activeBriefingText(service: ArbeitService, session: string): Promise<string | undefined> {
  const taskId = await activeTaskId(service, session);
  if (!taskId) return undefined;
  const text = await briefingText(service, taskId, "Arbeit: this session is working on");
  return `${text}\n${KEEP_CURRENT}`;
}
