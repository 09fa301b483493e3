import type { Envelope } from "../tools/envelope.js";

/**
 * Readable rendering for a terminal. Scripts get JSON; this is for people watching their agents.
 * Records the CLI knows (tasks, context entries, progress items, events, sessions, relationships,
 * files, memory) get one line each, recognised by their id prefix; anything else is printed as key: value.
 */

type Row = Record<string, unknown>;

function isRow(value: unknown): value is Row {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isTaskLike(value: Row): boolean {
  return typeof value.id === "string" && "status" in value && "title" in value;
}

function taskLine(task: Row): string {
  const flags = [
    task.type ? String(task.type) : null,
    task.priority === undefined ? null : `p${task.priority}`,
    task.blocked ? "blocked" : null,
    task.owner ? `@${task.owner}` : null,
    typeof task.depth === "number" ? `depth ${task.depth}` : null,
  ].filter(Boolean);
  return `${task.id}  ${String(task.status).padEnd(11)} ${task.title}${flags.length ? `  (${flags.join(", ")})` : ""}`;
}

/** Text whose later lines line up under the first. */
function flow(text: unknown, pad: string): string {
  return String(text).split("\n").join(`\n${pad}`);
}

/** One line (or a short block) for a record the CLI knows; undefined for anything else. */
function recordLine(row: Row, pad: string): string | undefined {
  if (isTaskLike(row)) return taskLine(row);
  const id = typeof row.id === "string" ? row.id : "";
  if (id.startsWith("ctx-")) {
    const superseded = row.superseded_by ? `  (superseded by ${row.superseded_by})` : "";
    return `${id}  ${String(row.type).padEnd(10)} ${flow(row.content, `${pad}    `)}${superseded}`;
  }
  if (id.startsWith("prg-")) return `[${row.completed ? "x" : " "}] ${id}  ${flow(row.content, `${pad}    `)}`;
  if (typeof row.seq === "number" && typeof row.event_type === "string") {
    // A full event (evt-...) or the compact form of a resume briefing ({seq, at, detail, ...}).
    const who = [row.agent ? `agent ${row.agent}` : null, row.session_id ? `session ${row.session_id}` : null];
    const by = who.filter(Boolean).join(", ");
    const subject = row.entity_id ?? row.task_id ?? "";
    const detail = row.detail === undefined ? "" : `  ${scalar(row.detail)}`;
    return `#${row.seq}  ${row.timestamp ?? row.at}  ${row.event_type}  ${subject}${detail}${by ? `  (${by})` : ""}`;
  }
  if (id.startsWith("mem-")) {
    const scope = [row.scope, row.scope_id].filter(Boolean).join(" ");
    const expiry = row.expires_at ? `, expires ${row.expires_at}` : "";
    return `${row.key} = ${scalar(row.value)}  (${scope}${expiry})`;
  }
  if (id.startsWith("ses-")) {
    return `${id}  session ${row.session_id}${row.agent ? `, agent ${row.agent}` : ""}  ${row.created_at}`;
  }
  if (id.startsWith("rel-")) {
    return `${id}  ${row.from_task_id} ${row.type} ${row.to_task_id}${row.other_deleted ? "  (other task deleted)" : ""}`;
  }
  if (typeof row.file_path === "string" && Array.isArray(row.operations)) {
    return `${row.file_path}  ${row.operations.join("+")}  last ${row.last_at}`;
  }
  return undefined;
}

function scalar(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (value === "") return '""';
  return typeof value === "string" ? value : JSON.stringify(value);
}

function renderValue(key: string, value: unknown, pad: string, out: string[]): void {
  if (Array.isArray(value)) {
    if (value.length === 0) out.push(`${pad}${key}: (none)`);
    else if (value.every((item) => !isRow(item) && !Array.isArray(item)))
      out.push(`${pad}${key}: ${value.map((item) => scalar(item)).join(", ")}`);
    else {
      out.push(`${pad}${key}:`);
      for (const item of value) renderItem(item, `${pad}  `, out);
    }
  } else if (isRow(value)) {
    const line = recordLine(value, pad);
    if (line !== undefined) out.push(`${pad}${key}: ${line}`);
    else if (typeof value.total === "number" && typeof value.percent === "number") {
      out.push(`${pad}${key}: ${value.completed} of ${value.total} done (${value.percent}%)`);
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
  const line = isRow(item) ? recordLine(item, pad) : undefined;
  if (line !== undefined) out.push(`${pad}${line}`);
  else if (isRow(item)) {
    const [first, ...others] = Object.entries(item);
    out.push(`${pad}- ${first ? `${first[0]}: ${scalar(first[1])}` : "{}"}`);
    for (const [k, v] of others) renderValue(k, v, `${pad}  `, out);
  } else out.push(`${pad}- ${scalar(item)}`);
}

/** The full task at the top of a response: its line, then the text fields an agent resumes from. */
function renderTask(task: Row, out: string[]): void {
  out.push(taskLine(task));
  for (const field of ["intent", "description", "plan"]) if (task[field]) renderValue(field, task[field], "  ", out);
  if (task.parent_id) out.push(`  parent: ${task.parent_id}`);
  if (Array.isArray(task.blocked_by) && task.blocked_by.length > 0)
    out.push(`  blocked by: ${task.blocked_by.join(", ")}`);
  out.push(`  version ${task.version}, updated ${task.updated_at}`);
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
    err.push(`error ${envelope.error.code}: ${envelope.error.message}`);
    for (const hint of envelope.error.suggestions ?? []) err.push(`  hint: ${hint}`);
  }
  for (const warning of envelope.warnings ?? []) err.push(`warning ${warning.code}: ${warning.message}`);
  return { stdout: out.length > 0 ? `${out.join("\n")}\n` : "", stderr: err.length > 0 ? `${err.join("\n")}\n` : "" };
}
