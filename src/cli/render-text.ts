import { DEFAULT_PRIORITY } from "../domain/types.js";
import { TASK_FIELDS } from "../service/summaries.js";
import type { Envelope } from "../tools/envelope.js";
import { terminalLine, terminalSafe } from "./terminal-text.js";
import { commandsForTools } from "./tool-hints.js";

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

/** What a listed task may carry besides its own fields. */
const TASK_ROW_KEYS = new Set<string>([
  ...TASK_FIELDS,
  "blocks",
  "metadata",
  "depth",
  "blocks_total",
  "blocks_directly",
  "operations",
  "last_at",
  "score",
  "dependants",
  "on_critical_path",
]);

/**
 * A task or a listing's summary of one, which may leave out even its status (ready's answer);
 * a row with anything else (why a task is not ready, say) is shown key by key.
 */
function isTaskLike(value: Row): boolean {
  return (
    typeof value.id === "string" &&
    value.id.startsWith("tkt-") &&
    "title" in value &&
    Object.keys(value).every((key) => TASK_ROW_KEYS.has(key))
  );
}

/** A value shown within one line. */
function line(value: unknown): string {
  return terminalLine(String(value));
}

/** A task in one line; `whole` for the task's own view, else its title is cut short. */
function taskLine(task: Row, whole = false): string {
  const flags = [
    task.type ? line(task.type) : null,
    // Summaries leave out what is at its default: priority 2, status open (ready's answer).
    `p${line(task.priority ?? DEFAULT_PRIORITY)}`,
    task.risk ? `risk ${line(task.risk)}` : null,
    task.impact ? `impact ${line(task.impact)}` : null,
    task.blocked ? "blocked" : null,
    task.owner ? `@${line(task.owner)}` : null,
    typeof task.depth === "number" ? `depth ${task.depth}` : null,
    // A bottleneck is worth its place in the list by what it holds up.
    typeof task.blocks_directly === "number" ? `blocks ${task.blocks_directly} directly` : null,
    typeof task.blocks_total === "number" ? `${task.blocks_total} in all` : null,
    typeof task.score === "number" ? `score ${task.score}` : null,
    typeof task.dependants === "number" ? `${task.dependants} waiting` : null,
    task.on_critical_path ? "critical path" : null,
  ].filter(Boolean);
  const title = terminalLine(String(task.title), whole ? undefined : TITLE_COLUMNS);
  return `${line(task.id)}  ${line(task.status ?? "open").padEnd(11)} ${title}${flags.length ? `  (${flags.join(", ")})` : ""}`;
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
    const detail = row.detail === undefined ? "" : `  ${eventDetail(row.detail)}`;
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

/**
 * A briefing event's detail: the payload as JSON, which reads better as words ("status to
 * in_progress") than as keys in quotes. Empty values are left out; anything else stays as it is.
 */
function eventDetail(detail: unknown): string {
  if (typeof detail !== "string" || !detail.startsWith("{")) return scalar(detail);
  let payload: unknown;
  try {
    payload = JSON.parse(detail);
  } catch {
    // Cut short to fit the briefing: no longer JSON, so shown as it came.
    return scalar(detail);
  }
  if (!isRow(payload)) return scalar(detail);
  return Object.entries(payload)
    .filter(([, value]) => value !== null && value !== undefined)
    .map(([key, value]) => `${line(key.replaceAll("_", " "))} ${scalar(value)}`)
    .join(", ");
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
  if (Array.isArray(task.blocks) && task.blocks.length > 0) out.push(`  blocks: ${task.blocks.map(line).join(", ")}`);
  if (isRow(task.metadata)) renderValue("metadata", task.metadata, "  ", out);
  out.push(`  version ${line(task.version)}, updated ${line(task.updated_at)}`);
}

/** Why resume chose the task, in the words of the person reading. */
const FOCUS_REASONS: Record<string, string> = {
  kept_focus: "you are working on it",
  last_started: "you started it last",
  claimed: "you hold its claim",
  assigned: "it is assigned to you",
  best_ready: "it is the best task ready to start",
};

function isResume(data: Row): boolean {
  return isRow(data.focus) && isRow(data.events) && isRow(data.cursor) && isRow(data.budget);
}

/** A list under a heading, one record line each; nothing at all when it is empty. */
function section(title: string, items: unknown, out: string[]): void {
  if (!Array.isArray(items) || items.length === 0) return;
  out.push(`${title}:`);
  for (const item of items) renderItem(item, "  ", out);
}

/** A person's answer in a line, then its text: who answered, on which task, and to which question. */
function renderAnswer(answer: Row, out: string[]): void {
  const question = isRow(answer.question) ? ` the question "${line(answer.question.content)}"` : "";
  out.push(`- ${line(answer.by)} answered${question} on ${line(answer.task_id)} (${line(answer.entry_id)}):`);
  out.push(`    ${flow(answer.content, "    ")}`);
}

/**
 * The resume briefing as a person reads it: a person's answers first, then the task, then what
 * surrounds it, then news.
 */
function renderResume(data: Row, out: string[]): void {
  const focus = data.focus as Row;
  const events = data.events as Row;
  const cursor = data.cursor as Row;
  const budget = data.budget as Row;
  const answers = Array.isArray(data.answers) ? data.answers.filter(isRow) : [];
  if (answers.length > 0) {
    out.push("Answers since you last looked:");
    for (const answer of answers) renderAnswer(answer, out);
    out.push("");
  }
  out.push(`Resume briefing for agent ${line(data.agent)}`, "");
  if (isRow(focus.task)) {
    const why = FOCUS_REASONS[String(focus.reason)];
    if (typeof focus.note === "string") out.push(line(focus.note));
    out.push(`Focus${why ? ` (${why})` : ""}:`);
    renderTask(focus.task, out);
  } else out.push("No task to resume: nothing in progress, claimed, assigned to you or ready.");
  if (isRow(data.parent)) out.push(`Parent: ${taskLine(data.parent)}`);
  section("Blocked by", data.blockers, out);
  section("Context", data.context, out);
  section("Superseded context", data.context_history, out);
  const progress = data.progress;
  if (isRow(progress) && typeof progress.total === "number" && progress.total > 0) {
    out.push(`Progress: ${line(progress.completed)} of ${progress.total} done (${line(progress.percent)}%)`);
    for (const item of Array.isArray(progress.remaining_items) ? progress.remaining_items : [])
      renderItem(item, "  ", out);
  }
  section("Files", data.files, out);
  section("Memory", data.memory, out);
  const shown = Array.isArray(events.shown) ? events.shown : [];
  const others = Number(events.by_other_agents) > 0 ? `, ${line(events.by_other_agents)} by other agents` : "";
  const count = `${line(events.total)} event${events.total === 1 ? "" : "s"}`;
  out.push(
    `Since event #${line(events.after_seq)}: ${count}${others}${shown.length < Number(events.total) ? ` (latest ${shown.length} shown)` : ""}`,
  );
  for (const event of shown) renderItem(event, "  ", out);
  if (cursor.advanced === true) out.push(`Events up to #${line(cursor.current)} are now marked as seen.`);
  if (Array.isArray(budget.cut) && budget.cut.length > 0)
    out.push(`Shortened to fit about ${line(budget.max_tokens)} tokens: ${budget.cut.map(line).join("; ")}.`);
}

function isInit(data: Row): boolean {
  return data.initialized === true && typeof data.path === "string" && typeof data.root === "string";
}

/**
 * What init made, and the question that follows it: whether to commit .arbeit/. No: the database
 * is binary and changes with every call, so init has git ignore it (in a new .arbeit/).
 */
function renderInit(data: Row, out: string[]): void {
  const path = String(data.path);
  out.push(`Initialised Arbeit in ${line(data.root)}`, `  store: ${line(path)}`);
  // A SQLite store is named by its file; a Postgres one by its URL.
  if (!/^([/\\]|[A-Za-z]:)/.test(path)) {
    out.push(
      "Tasks live in the shared Postgres store. .arbeit/ only marks this checkout as the project root;",
      "git ignores it (.arbeit/.gitignore), and each checkout runs `arbeit init` once.",
    );
    return;
  }
  const ignored = /[/\\]\.arbeit[/\\]arbeit\.db$/.test(path);
  out.push(
    `Do not commit the database: it is binary and changes with every call${ignored ? ", so git ignores .arbeit/ (.arbeit/.gitignore)." : "."}`,
    "To share tasks, use `arbeit export` and `arbeit import`, or a shared Postgres store (docs/postgres.md).",
  );
}

export function renderText(envelope: Envelope): { stdout: string; stderr: string } {
  const out: string[] = [];
  const err: string[] = [];
  if (envelope.success) {
    const data = envelope.data;
    if (isRow(data) && isResume(data)) renderResume(data, out);
    else if (isRow(data) && isInit(data)) renderInit(data, out);
    else if (isRow(data)) {
      for (const [key, value] of Object.entries(data)) {
        if (key === "task" && isRow(value) && isTaskLike(value)) renderTask(value, out);
        else renderValue(key, value, "", out);
      }
    } else if (data !== undefined) out.push(scalar(data));
  } else {
    // Messages quote titles and names: one line each, so nothing in them can pass for a hint.
    err.push(`error ${line(envelope.error.code)}: ${line(envelope.error.message)}`);
    for (const hint of envelope.error.suggestions ?? []) err.push(`  hint: ${line(commandsForTools(hint))}`);
  }
  for (const warning of envelope.warnings ?? [])
    err.push(`warning ${line(warning.code)}: ${line(commandsForTools(warning.message))}`);
  // Whatever a record line above did not know it held is still escaped on the way out.
  const text = (lines: string[]) => (lines.length > 0 ? terminalSafe(`${lines.join("\n")}\n`, { newlines: true }) : "");
  return { stdout: text(out), stderr: text(err) };
}
