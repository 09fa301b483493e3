import type { Envelope } from "../tools/envelope.js";
import { terminalLine, terminalSafe } from "./terminal-text.js";

/**
 * Readable rendering for a terminal. Scripts get JSON; this is for people watching their agents.
 * Records the CLI knows (tasks, context entries, progress items, events, sessions, relationships,
 * files, memory) get one line each, recognised by their id prefix; anything else is printed as key: value.
 * User text never reaches the terminal raw (terminal-text.ts): one-line places escape line breaks
 * too, multi-line fields keep theirs, and a title in a list is cut to TITLE_COLUMNS.
 */

/** How much of a title a list line shows; the task's own view and JSON show all of it. */
export const TITLE_COLUMNS = 80;

type Row = Record<string, unknown>;

function isRow(value: unknown): value is Row {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isTaskLike(value: Row): boolean {
  return typeof value.id === "string" && "status" in value && "title" in value;
}

/** A value shown within one line. */
function line(value: unknown): string {
  return terminalLine(String(value));
}

/** A task in one line; `whole` for the task's own view, else its title is cut short. */
function taskLine(task: Row, whole = false): string {
  const flags = [
    task.type ? line(task.type) : null,
    task.priority === undefined ? null : `p${line(task.priority)}`,
    task.blocked ? "blocked" : null,
    task.owner ? `@${line(task.owner)}` : null,
    typeof task.depth === "number" ? `depth ${task.depth}` : null,
  ].filter(Boolean);
  const title = terminalLine(String(task.title), whole ? undefined : TITLE_COLUMNS);
  return `${line(task.id)}  ${line(task.status).padEnd(11)} ${title}${flags.length ? `  (${flags.join(", ")})` : ""}`;
}

/** Text whose later lines line up under the first. */
function flow(text: unknown, pad: string): string {
  return terminalSafe(String(text), { newlines: true }).split("\n").join(`\n${pad}`);
}

/** One line (or a short block) for a record the CLI knows; undefined for anything else. */
function recordLine(row: Row, pad: string): string | undefined {
  if (isTaskLike(row)) return taskLine(row);
  const id = typeof row.id === "string" ? row.id : "";
  if (id.startsWith("ctx-")) {
    const superseded = row.superseded_by ? `  (superseded by ${line(row.superseded_by)})` : "";
    return `${line(id)}  ${line(row.type).padEnd(10)} ${flow(row.content, `${pad}    `)}${superseded}`;
  }
  if (id.startsWith("prg-")) return `[${row.completed ? "x" : " "}] ${line(id)}  ${flow(row.content, `${pad}    `)}`;
  if (typeof row.seq === "number" && typeof row.event_type === "string") {
    // A full event (evt-...) or the compact form of a resume briefing ({seq, at, detail, ...}).
    const who = [
      row.agent ? `agent ${line(row.agent)}` : null,
      row.session_id ? `session ${line(row.session_id)}` : null,
    ];
    const by = who.filter(Boolean).join(", ");
    const subject = line(row.entity_id ?? row.task_id ?? "");
    const detail = row.detail === undefined ? "" : `  ${scalar(row.detail)}`;
    return `#${row.seq}  ${line(row.timestamp ?? row.at)}  ${line(row.event_type)}  ${subject}${detail}${by ? `  (${by})` : ""}`;
  }
  if (id.startsWith("mem-")) {
    const scope = [row.scope, row.scope_id].filter(Boolean).map(line).join(" ");
    const expiry = row.expires_at ? `, expires ${line(row.expires_at)}` : "";
    return `${line(row.key)} = ${scalar(row.value)}  (${scope}${expiry})`;
  }
  if (id.startsWith("ses-")) {
    return `${line(id)}  session ${line(row.session_id)}${row.agent ? `, agent ${line(row.agent)}` : ""}  ${line(row.created_at)}`;
  }
  if (id.startsWith("rel-")) {
    return `${line(id)}  ${line(row.from_task_id)} ${line(row.type)} ${line(row.to_task_id)}${row.other_deleted ? "  (other task deleted)" : ""}`;
  }
  if (typeof row.file_path === "string" && Array.isArray(row.operations)) {
    return `${line(row.file_path)}  ${row.operations.map(line).join("+")}  last ${line(row.last_at)}`;
  }
  return undefined;
}

function scalar(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (value === "") return '""';
  // JSON.stringify escapes C0 characters but leaves C1 and bidi controls as they are.
  return line(typeof value === "string" ? value : JSON.stringify(value));
}

function renderValue(rawKey: string, value: unknown, pad: string, out: string[]): void {
  // Keys of user objects (metadata, memory values) are user text too.
  const key = line(rawKey);
  if (Array.isArray(value)) {
    if (value.length === 0) out.push(`${pad}${key}: (none)`);
    else if (value.every((item) => !isRow(item) && !Array.isArray(item)))
      out.push(`${pad}${key}: ${value.map((item) => scalar(item)).join(", ")}`);
    else {
      out.push(`${pad}${key}:`);
      for (const item of value) renderItem(item, `${pad}  `, out);
    }
  } else if (isRow(value)) {
    const record = recordLine(value, pad);
    if (record !== undefined) out.push(`${pad}${key}: ${record}`);
    else if (typeof value.total === "number" && typeof value.percent === "number") {
      out.push(`${pad}${key}: ${line(value.completed)} of ${value.total} done (${value.percent}%)`);
      if (Array.isArray(value.remaining_items) && value.remaining_items.length > 0)
        for (const item of value.remaining_items) renderItem(item, `${pad}  `, out);
    } else {
      out.push(`${pad}${key}:`);
      for (const [k, v] of Object.entries(value)) renderValue(k, v, `${pad}  `, out);
    }
  } else if (typeof value === "string" && value.includes("\n")) {
    out.push(`${pad}${key}:`, `${pad}  ${flow(value, `${pad}  `)}`);
  } else out.push(`${pad}${key}: ${scalar(value)}`);
}

function renderItem(item: unknown, pad: string, out: string[]): void {
  const record = isRow(item) ? recordLine(item, pad) : undefined;
  if (record !== undefined) out.push(`${pad}${record}`);
  else if (isRow(item)) {
    const [first, ...others] = Object.entries(item);
    out.push(`${pad}- ${first ? `${line(first[0])}: ${scalar(first[1])}` : "{}"}`);
    for (const [k, v] of others) renderValue(k, v, `${pad}  `, out);
  } else out.push(`${pad}- ${scalar(item)}`);
}

/** The full task at the top of a response: its line, then the text fields an agent resumes from. */
function renderTask(task: Row, out: string[]): void {
  out.push(taskLine(task, true));
  for (const field of ["intent", "description", "plan"]) if (task[field]) renderValue(field, task[field], "  ", out);
  if (task.parent_id) out.push(`  parent: ${line(task.parent_id)}`);
  if (Array.isArray(task.blocked_by) && task.blocked_by.length > 0)
    out.push(`  blocked by: ${task.blocked_by.map(line).join(", ")}`);
  out.push(`  version ${line(task.version)}, updated ${line(task.updated_at)}`);
}

export function renderText(envelope: Envelope): { stdout: string; stderr: string } {
  const out: string[] = [];
  const err: string[] = [];
  if (envelope.success) {
    const data = envelope.data;
    if (isRow(data)) {
      for (const [key, value] of Object.entries(data)) {
        if (key === "task" && isRow(value) && isTaskLike(value)) renderTask(value, out);
        else renderValue(key, value, "", out);
      }
    } else if (data !== undefined) out.push(scalar(data));
  } else {
    // Messages quote titles and names: one line each, so nothing in them can pass for a hint.
    err.push(`error ${line(envelope.error.code)}: ${line(envelope.error.message)}`);
    for (const hint of envelope.error.suggestions ?? []) err.push(`  hint: ${line(hint)}`);
  }
  for (const warning of envelope.warnings ?? []) err.push(`warning ${line(warning.code)}: ${line(warning.message)}`);
  // Whatever a record line above did not know it held is still escaped on the way out.
  const text = (lines: string[]) => (lines.length > 0 ? terminalSafe(`${lines.join("\n")}\n`, { newlines: true }) : "");
  return { stdout: text(out), stderr: text(err) };
}
