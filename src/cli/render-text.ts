import type { Envelope } from "../tools/envelope.js";

/** Readable rendering for a terminal. Scripts get JSON; this is for people watching their agents. */

type Row = Record<string, unknown>;

function isTaskLike(value: unknown): value is Row {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Row).id === "string" &&
    "status" in value &&
    "title" in value
  );
}

function taskLine(task: Row): string {
  const flags = [
    task.type ? String(task.type) : null,
    `p${task.priority}`,
    task.blocked ? "blocked" : null,
    task.owner ? `@${task.owner}` : null,
    typeof task.depth === "number" ? `depth ${task.depth}` : null,
  ].filter(Boolean);
  return `${task.id}  ${String(task.status).padEnd(11)} ${task.title}  (${flags.join(", ")})`;
}

function scalar(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (typeof value === "string") return value.includes("\n") ? `\n${indent(value, "    ")}` : value;
  return JSON.stringify(value);
}

function indent(text: string, pad: string): string {
  return text
    .split("\n")
    .map((line) => pad + line)
    .join("\n");
}

function renderValue(key: string, value: unknown, pad: string, out: string[]): void {
  if (Array.isArray(value)) {
    out.push(`${pad}${key}: ${value.length === 0 ? "(none)" : ""}`);
    for (const item of value) {
      if (isTaskLike(item)) out.push(`${pad}  - ${taskLine(item)}`);
      else if (typeof item === "object" && item !== null) {
        const entries = Object.entries(item as Row);
        const [firstKey, firstValue] = entries[0] ?? ["", ""];
        out.push(`${pad}  - ${firstKey}: ${scalar(firstValue)}`);
        for (const [k, v] of entries.slice(1)) renderValue(k, v, `${pad}    `, out);
      } else out.push(`${pad}  - ${scalar(item)}`);
    }
  } else if (isTaskLike(value) && key !== "") {
    out.push(`${pad}${key}: ${taskLine(value)}`);
  } else if (typeof value === "object" && value !== null) {
    out.push(`${pad}${key}:`);
    for (const [k, v] of Object.entries(value as Row)) renderValue(k, v, `${pad}  `, out);
  } else {
    out.push(`${pad}${key}: ${scalar(value)}`);
  }
}

export function renderText(envelope: Envelope): { stdout: string; stderr: string } {
  const out: string[] = [];
  const err: string[] = [];
  if (envelope.success) {
    const data = envelope.data as Row;
    for (const [key, value] of Object.entries(data ?? {})) {
      if (key === "task" && isTaskLike(value)) {
        out.push(taskLine(value));
        for (const field of ["intent", "description", "plan"])
          if (value[field]) renderValue(field, value[field], "  ", out);
        if (value.parent_id) out.push(`  parent: ${value.parent_id}`);
        if (Array.isArray(value.blocked_by) && value.blocked_by.length > 0)
          out.push(`  blocked by: ${value.blocked_by.join(", ")}`);
        out.push(`  version ${value.version}, updated ${value.updated_at}`);
      } else renderValue(key, value, "", out);
    }
  } else {
    err.push(`error ${envelope.error.code}: ${envelope.error.message}`);
    for (const hint of envelope.error.suggestions ?? []) err.push(`  hint: ${hint}`);
  }
  for (const warning of envelope.warnings ?? []) err.push(`warning ${warning.code}: ${warning.message}`);
  return { stdout: out.length > 0 ? `${out.join("\n")}\n` : "", stderr: err.length > 0 ? `${err.join("\n")}\n` : "" };
}
