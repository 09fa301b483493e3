import { DEFAULT_PRIORITY, type Task, type TaskSummary } from "../domain/types.js";

/** A whole task or the summary a listing returns: fragments take either. */
export type TaskLike = Task | TaskSummary;

/** Small text helpers for fragments: one idea per line, nothing a model has to decode. */

/** Collapses whitespace so that a value fits on one line. */
export function oneLine(value: string): string {
  return value.replace(/\s+/g, " ").trim();
}

/** Indents every line of `value` by `pad`, dropping trailing blank lines. */
export function indent(value: string, pad: string): string {
  return value
    .replace(/\s+$/, "")
    .split("\n")
    .map((line) => (line.trim() === "" ? "" : pad + line.trimEnd()))
    .join("\n");
}

/** `label: value` on one line when the value is one line, else the label and the value indented below. */
export function field(label: string, value: string, pad: string): string {
  const text = value.trim();
  return text.includes("\n") ? `${pad}${label}:\n${indent(text, `${pad}  `)}` : `${pad}${label}: ${text}`;
}

/** What a task line says besides id, status and title; the default priority (2) goes unsaid. */
export function attributes(task: TaskLike): string[] {
  const out: string[] = [];
  if (task.type) out.push(task.type);
  const priority = task.priority ?? DEFAULT_PRIORITY;
  if (priority !== DEFAULT_PRIORITY) out.push(`priority ${priority}`);
  if (task.owner) {
    out.push(`owner ${oneLine(task.owner)}${task.lease_expires_at ? ` (lease until ${task.lease_expires_at})` : ""}`);
  }
  if (task.parent_id) out.push(`parent ${task.parent_id}`);
  // An agent weighs a risky task's steps more carefully, so its assessment travels with the task.
  if (task.risk) out.push(`${task.risk} risk`);
  if (task.impact) out.push(`${task.impact} impact`);
  const blockers = task.blocked_by ?? [];
  if (blockers.length > 0)
    out.push(task.blocked ? `blocked by ${blockers.join(", ")}` : `blockers done: ${blockers.join(", ")}`);
  if (task.active_form) out.push(`doing: ${oneLine(task.active_form)}`);
  return out;
}

/** `tkt-a7f3b2c1 [open] Title · bug · priority 1`: one task in one line (ready's tasks, with no status, are open). */
export function taskLine(task: TaskLike): string {
  return [`${task.id} [${task.status ?? "open"}] ${oneLine(task.title)}`, ...attributes(task)].join(" · ");
}
