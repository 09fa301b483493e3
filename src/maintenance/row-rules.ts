import { z } from "zod";
import { MAX_LEASE_SECONDS } from "../domain/claims.js";
import { ArbeitError } from "../domain/errors.js";
import { ID_PREFIX, type IdKind, idPattern } from "../domain/ids.js";
import {
  CONTEXT_TYPES,
  ENTITY_TYPES,
  type EntityType,
  EVENT_TYPES,
  FILE_OPERATIONS,
  MAX_HIERARCHY_DEPTH,
  MEMORY_SCOPES,
  RELATIONSHIP_TYPES,
  RISK_LEVELS,
  TASK_STATUSES,
  TASK_TYPES,
} from "../domain/types.js";
import { assertTitle } from "../domain/validation.js";
import { WEBHOOK_KINDS } from "../notify/webhooks.js";
import {
  expectedVersion,
  id,
  identityName,
  jsonValue,
  name,
  requestId,
  storedMetadata,
  taskId,
  text,
  timestamp,
} from "../schemas/common.js";
import { priority } from "../schemas/inputs.js";
import { LIMITS } from "../schemas/limits.js";
import { messageFor } from "../schemas/zod-errors.js";
import { TOKEN_KINDS } from "../team/token-rules.js";
import { SEQUENCE_TABLE } from "./engine.js";

/**
 * What a valid row is, table by table, in the rules the tools apply to what they are given: the
 * same id forms, field limits, enums and JSON checks (imported from the tool schemas, never
 * restated), and the rules that span rows: references resolve, no cycle among the live `blocks`
 * or `parent_of` links between live tasks, no hierarchy deeper than the tools allow, an event
 * counter never behind the log. `arbeit import` holds every line of a file to them and `arbeit
 * doctor` every row of a store, so a row that no tool would have written is found either way.
 */

/** A JSON column: text holding JSON that `schema` accepts. */
function jsonText(schema: z.ZodType) {
  return z.string().superRefine((value, ctx) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      ctx.addIssue({ code: "custom", message: "is not valid JSON" });
      return;
    }
    const result = schema.safeParse(parsed);
    if (!result.success) ctx.addIssue({ code: "custom", message: messageFor(result.error.issues[0]!) });
  });
}

/** Flags the schema keeps as 0 or 1 (SQLite has no boolean). */
const flag = z.union([z.literal(0), z.literal(1)]);
/** relationships.open_edge: 0 closed, 1 open, 2 open at its blocked end, its blocker a hub (schema v12). */
const edgeFlag = z.union([z.literal(0), z.literal(1), z.literal(2)]);
const count = z.number().int().min(0);
const title = text(LIMITS.title).superRefine((value, ctx) => {
  try {
    assertTitle(value);
  } catch (error) {
    if (!(error instanceof ArbeitError)) throw error;
    ctx.addIssue({ code: "custom", message: "must not be blank: every task needs a title" });
  }
});
const longText = text(LIMITS.text).nullable();
/** Any JSON object; JSON.parse has already made it plain JSON. */
const jsonObject = z.custom<Record<string, unknown>>(
  (value) => typeof value === "object" && value !== null && !Array.isArray(value),
  "must be a JSON object",
);

/** Which id form an event's entity_id takes, by its entity_type (a session's is its session id). */
const ENTITY_ID_KIND: Record<Exclude<EntityType, "session">, IdKind> = {
  memory: "memory",
  task: "task",
  context_entry: "context",
  progress_item: "progress",
  relationship: "relationship",
  session_link: "session",
  file_association: "file",
  token: "token",
  reservation: "reservation",
};

const ENTITY_ID = Object.fromEntries(
  Object.entries(ENTITY_ID_KIND).map(([type, kind]) => [type, idPattern(kind)]),
) as Record<Exclude<EntityType, "session">, RegExp>;

/** Only the event log keeps a counter of its own (AUTOINCREMENT in SQLite, an identity in Postgres). */
const COUNTED_TABLES = ["events"] as const;

const TABLES: Record<string, z.ZodObject> = {
  tasks: z.strictObject({
    id: taskId,
    list_id: identityName,
    title,
    type: z.enum(TASK_TYPES).nullable(),
    status: z.enum(TASK_STATUSES),
    intent: longText,
    description: longText,
    plan: longText,
    priority: priority(),
    owner: identityName.nullable(),
    active_form: name.nullable(),
    version: expectedVersion,
    created_at: timestamp,
    updated_at: timestamp,
    deleted_at: timestamp.nullable(),
    lease_expires_at: timestamp.nullable(),
    claimed_at: timestamp.nullable(),
    claim_session: identityName.nullable(),
    open_children: count,
    risk: z.enum(RISK_LEVELS).nullable(),
    impact: z.enum(RISK_LEVELS).nullable(),
    claim_lease_seconds: z.number().int().min(1).max(MAX_LEASE_SECONDS).nullable(),
    metadata: jsonText(storedMetadata).nullable(),
    open_blockers: count,
  }),
  reservations: z.strictObject({
    id: id("reservation"),
    pattern: text(LIMITS.file_path).min(1),
    prefix: text(LIMITS.file_path),
    exclusive: flag,
    session_id: identityName,
    agent: identityName.nullable(),
    task_id: taskId.nullable(),
    lease_seconds: z.number().int().min(1).max(MAX_LEASE_SECONDS),
    expires_at: timestamp,
    created_at: timestamp,
  }),
  relationships: z
    .strictObject({
      id: id("relationship"),
      from_task_id: taskId,
      to_task_id: taskId,
      type: z.enum(RELATIONSHIP_TYPES),
      metadata: jsonText(storedMetadata).nullable(),
      created_at: timestamp,
      removed_at: timestamp.nullable(),
      open_edge: edgeFlag,
    })
    .superRefine((row, ctx) => {
      if (row.from_task_id === row.to_task_id) {
        ctx.addIssue({
          code: "custom",
          path: ["to_task_id"],
          message: "is the task at the other end: no task relates to itself",
        });
      }
    }),
  context_entries: z.strictObject({
    id: id("context"),
    task_id: taskId,
    type: z.enum(CONTEXT_TYPES),
    content: text(LIMITS.context_content).min(1),
    metadata: jsonText(storedMetadata).nullable(),
    superseded_by: id("context").nullable(),
    created_at: timestamp,
  }),
  progress_items: z.strictObject({
    id: id("progress"),
    task_id: taskId,
    content: text(LIMITS.progress_item).min(1),
    completed: flag,
    created_at: timestamp,
    completed_at: timestamp.nullable(),
  }),
  session_links: z.strictObject({
    id: id("session"),
    task_id: taskId,
    session_id: identityName,
    agent: identityName.nullable(),
    created_at: timestamp,
  }),
  active_work: z.strictObject({
    session_id: identityName,
    task_id: taskId,
    agent: identityName.nullable(),
    started_at: timestamp,
    stopped_at: timestamp.nullable(),
  }),
  file_associations: z.strictObject({
    id: id("file"),
    task_id: taskId,
    file_path: text(LIMITS.file_path).min(1),
    operation: z.enum(FILE_OPERATIONS),
    session_id: identityName,
    created_at: timestamp,
  }),
  events: z
    .strictObject({
      seq: z.number().int().min(1),
      id: id("event"),
      timestamp,
      event_type: z.enum(EVENT_TYPES),
      entity_type: z.enum(ENTITY_TYPES),
      entity_id: z.string(),
      task_id: taskId.nullable(),
      payload: jsonText(jsonObject),
      session_id: identityName.nullable(),
      agent: identityName.nullable(),
    })
    .superRefine((row, ctx) => {
      if (row.entity_type === "session") {
        if (!identityName.safeParse(row.entity_id).success)
          ctx.addIssue({ code: "custom", path: ["entity_id"], message: "must be a session id" });
        return;
      }
      const kind = ENTITY_ID_KIND[row.entity_type];
      if (!ENTITY_ID[row.entity_type].test(row.entity_id)) {
        ctx.addIssue({
          code: "custom",
          path: ["entity_id"],
          message: `must be the id of a ${row.entity_type}, like ${ID_PREFIX[kind]}-a7f3b2c1`,
        });
      }
    }),
  memory: z
    .strictObject({
      id: id("memory"),
      scope: z.enum(MEMORY_SCOPES),
      scope_id: z.string(),
      key: text(LIMITS.name).min(1),
      value: jsonText(jsonValue(z.unknown(), LIMITS.memory_value_bytes)),
      expires_at: timestamp.nullable(),
      created_at: timestamp,
      updated_at: timestamp,
      reinforced: z.number().int().min(1),
    })
    .superRefine((row, ctx) => {
      // As arbeit_memory settles scope_id: none for the project, a task's id, a name otherwise.
      const rule = row.scope === "project" ? z.literal("") : row.scope === "task" ? taskId : name.min(1);
      const result = rule.safeParse(row.scope_id);
      if (!result.success) {
        const message =
          row.scope === "project" ? "must be empty for the project scope" : messageFor(result.error.issues[0]!);
        ctx.addIssue({ code: "custom", path: ["scope_id"], message });
      }
    }),
  idempotency: z.strictObject({
    session_id: identityName,
    list_id: z.union([z.literal(""), identityName]),
    request_id: requestId,
    tool: text(LIMITS.name).min(1),
    args_hash: text(LIMITS.name).min(1),
    response: jsonText(z.unknown()),
    created_at: timestamp,
  }),
  session_state: z.strictObject({
    session_id: identityName,
    agent: identityName.nullable(),
    cursor_seq: count,
    focus_task_id: taskId.nullable(),
    updated_at: timestamp,
  }),
  tokens: z.strictObject({
    id: id("token"),
    name: identityName,
    kind: z.enum(TOKEN_KINDS),
    read_only: flag,
    hash: z.string().regex(/^[0-9a-f]{64}$/, "must be a SHA-256 in hex"),
    created_at: timestamp,
    expires_at: timestamp.nullable(),
    revoked_at: timestamp.nullable(),
    last_used_at: timestamp.nullable(),
  }),
  webhooks: z.strictObject({
    id: id("webhook"),
    url: z.string().url().max(2000),
    events: jsonText(z.array(z.enum(WEBHOOK_KINDS)).min(1)),
    secret: text(LIMITS.name).min(1),
    created_at: timestamp,
    removed_at: timestamp.nullable(),
    delivered_seq: count,
    last_success_at: timestamp.nullable(),
    last_failure_at: timestamp.nullable(),
    last_failure: longText,
  }),
  [SEQUENCE_TABLE]: z.strictObject({
    name: z.enum(COUNTED_TABLES),
    seq: count,
  }),
};

/** The columns the rules know for each table: a table the schema gains needs rules here too. */
export const RULE_COLUMNS: Record<string, string[]> = Object.fromEntries(
  Object.entries(TABLES).map(([table, schema]) => [table, Object.keys(schema.shape)]),
);

/** Columns that name a row of another table, as the schema's foreign keys do. */
const REFERENCES: Record<string, Array<[column: string, table: "tasks" | "context_entries"]>> = {
  relationships: [
    ["from_task_id", "tasks"],
    ["to_task_id", "tasks"],
  ],
  context_entries: [
    ["task_id", "tasks"],
    ["superseded_by", "context_entries"],
  ],
  progress_items: [["task_id", "tasks"]],
  session_links: [["task_id", "tasks"]],
  active_work: [["task_id", "tasks"]],
  file_associations: [["task_id", "tasks"]],
  session_state: [["focus_task_id", "tasks"]],
  reservations: [["task_id", "tasks"]],
};

export interface RuleProblem {
  table: string;
  column?: string;
  /** The row's id (or key), where it has one. */
  key?: string;
  /** Where the row came from: a line of a file, or the order rows were read in. */
  ref: number;
  message: string;
}

interface Link {
  id: string;
  from: string;
  to: string;
  type: "blocks" | "parent_of";
  ref: number;
}

const SHOWN = 60;

/** The tools' wording for a field, read after a column name. */
function columnMessage(issue: z.core.$ZodIssue, present: boolean): string {
  if (issue.code === "invalid_type" && present)
    return `must be ${issue.expected === "null" ? "null" : `a ${issue.expected}`}`;
  if (issue.code === "too_small") {
    return issue.origin === "number" ? `must be at least ${String(issue.minimum)}` : "must not be empty";
  }
  const message = messageFor(issue);
  return message.startsWith("too ") ? `is ${message}` : message;
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > SHOWN ? `${text.slice(0, SHOWN)}…` : text;
}

/** What names a row of `table` for a person: its id (the counter's table name for the counter). */
export function rowKey(table: string, row: Record<string, unknown>): string | undefined {
  const key = table === SEQUENCE_TABLE ? row.name : row.id;
  return typeof key === "string" ? key : undefined;
}

/**
 * Holds rows to the rules one at a time (`check`), remembering only what the rules across rows
 * need — ids, the live graph links, the highest event seq — and settles those in one pass at the
 * end (`finish`), so checking a large store costs a walk over its rows and nothing per row beyond.
 */
export class RowRules {
  /** Every task id, and whether that task is deleted. */
  readonly #tasks = new Map<string, boolean>();
  readonly #contexts = new Set<string>();
  readonly #pending: Array<{
    table: string;
    column: string;
    target: string;
    value: string;
    key?: string;
    ref: number;
  }> = [];
  readonly #links: Link[] = [];
  #maxSeq = 0;
  readonly #counters: Array<{ seq: number; ref: number }> = [];

  /** The first thing wrong with `row` of `table`; undefined when it is sound. Tables without rules pass. */
  check(table: string, row: Record<string, unknown>, ref: number): RuleProblem | undefined {
    const schema = TABLES[table];
    if (!schema) return undefined;
    const key = rowKey(table, row);
    const result = schema.safeParse(row);
    if (!result.success) {
      const issue = result.error.issues[0]!;
      const column =
        issue.code === "unrecognized_keys"
          ? issue.keys[0]!
          : typeof issue.path[0] === "string"
            ? issue.path[0]
            : undefined;
      const message =
        issue.code === "unrecognized_keys"
          ? `unknown column ${column}: ${table} has no such column`
          : `${table}.${column} ${columnMessage(issue, column !== undefined && column in row)}${column !== undefined && column in row ? ` (it holds ${show(row[column])})` : ""}`;
      return {
        table,
        ...(column !== undefined ? { column } : {}),
        ...(key !== undefined ? { key } : {}),
        ref,
        message,
      };
    }
    this.#remember(table, row, key, ref);
    return undefined;
  }

  #remember(table: string, row: Record<string, unknown>, key: string | undefined, ref: number): void {
    // The row passed its table's rules: these columns hold what the schema says.
    if (table === "tasks") this.#tasks.set(row.id as string, row.deleted_at !== null);
    else if (table === "context_entries") this.#contexts.add(row.id as string);
    else if (table === "events") this.#maxSeq = Math.max(this.#maxSeq, row.seq as number);
    else if (table === SEQUENCE_TABLE) this.#counters.push({ seq: row.seq as number, ref });
    else if (
      table === "relationships" &&
      row.removed_at === null &&
      (row.type === "blocks" || row.type === "parent_of")
    ) {
      const [from, to] = [row.from_task_id as string, row.to_task_id as string];
      this.#links.push({ id: row.id as string, from, to, type: row.type, ref });
    }
    for (const [column, target] of REFERENCES[table] ?? []) {
      const value = row[column] as string | null;
      if (value === null || this.#exists(target, value)) continue;
      this.#pending.push({ table, column, target, value, ...(key !== undefined ? { key } : {}), ref });
    }
  }

  #exists(target: string, value: string): boolean {
    return target === "tasks" ? this.#tasks.has(value) : this.#contexts.has(value);
  }

  /** The problems across rows, each naming the row that shows it; call once every row is checked. */
  finish(): RuleProblem[] {
    const problems: RuleProblem[] = [];
    for (const ref of this.#pending) {
      if (this.#exists(ref.target, ref.value)) continue;
      problems.push({
        table: ref.table,
        column: ref.column,
        ...(ref.key !== undefined ? { key: ref.key } : {}),
        ref: ref.ref,
        message: `${ref.table}.${ref.column} names ${ref.target} row ${ref.value}, which does not exist`,
      });
    }
    // The tools walk the graph past deleted tasks (a path through one is no path), so a link with
    // a deleted (or missing) end takes no part in cycles or depth.
    const live = this.#links.filter(
      (link) => this.#tasks.get(link.from) === false && this.#tasks.get(link.to) === false,
    );
    for (const type of ["blocks", "parent_of"] as const) {
      for (const cycle of findCycles(live.filter((link) => link.type === type)))
        problems.push(cycleProblem(type, cycle));
    }
    problems.push(...depthProblems(live.filter((link) => link.type === "parent_of")));
    for (const counter of this.#counters) {
      if (counter.seq >= this.#maxSeq) continue;
      problems.push({
        table: SEQUENCE_TABLE,
        column: "seq",
        key: "events",
        ref: counter.ref,
        message: `the event counter stands at ${counter.seq}, behind the highest event seq ${this.#maxSeq}: new events would reuse numbers`,
      });
    }
    return problems;
  }
}

/**
 * Cycles, found by one depth-first walk over the links: each link that leads back to a task still
 * on the walk's path closes one. A graph without cycles yields none; one with cycles yields at
 * least one per tangle.
 */
function findCycles(links: Link[]): Link[][] {
  const out = new Map<string, Link[]>();
  for (const link of links) {
    const list = out.get(link.from);
    if (list) list.push(link);
    else out.set(link.from, [link]);
  }
  const state = new Map<string, "open" | "done">();
  const cycles: Link[][] = [];
  for (const start of out.keys()) {
    if (state.has(start)) continue;
    const path: Array<{ node: string; via: Link | undefined; next: number }> = [
      { node: start, via: undefined, next: 0 },
    ];
    const onPath = new Map<string, number>([[start, 0]]);
    state.set(start, "open");
    while (path.length > 0) {
      const top = path.at(-1)!;
      const edges = out.get(top.node) ?? [];
      if (top.next >= edges.length) {
        state.set(top.node, "done");
        onPath.delete(top.node);
        path.pop();
        continue;
      }
      const link = edges[top.next++]!;
      const seen = state.get(link.to);
      if (seen === "open") {
        const from = onPath.get(link.to)!;
        cycles.push([...path.slice(from + 1).map((step) => step.via!), link]);
      } else if (seen === undefined) {
        state.set(link.to, "open");
        onPath.set(link.to, path.length);
        path.push({ node: link.to, via: link, next: 0 });
      }
    }
  }
  return cycles;
}

function cycleProblem(type: "blocks" | "parent_of", cycle: Link[]): RuleProblem {
  // The link that closes it: the last of the cycle to be written (or read).
  const closing = cycle.reduce((last, link) => (link.ref > last.ref ? link : last));
  const start = cycle.indexOf(closing);
  const ordered = [...cycle.slice(start), ...cycle.slice(0, start)];
  const tasks = [...ordered.map((link) => link.from), closing.from];
  const shown = tasks.length > 12 ? [...tasks.slice(0, 6), "…", ...tasks.slice(-5)] : tasks;
  return {
    table: "relationships",
    key: closing.id,
    ref: closing.ref,
    message: `relationship ${closing.id} (${closing.from} ${type} ${closing.to}) closes a cycle in the ${type === "blocks" ? "dependencies" : "hierarchy"}: ${shown.join(" -> ")}`,
  };
}

/** Each live link whose child would sit below the deepest level the tools allow. */
function depthProblems(links: Link[]): RuleProblem[] {
  const parentOf = new Map<string, string>();
  for (const link of links) parentOf.set(link.to, link.from);
  const level = new Map<string, number>();
  const levelOf = (task: string): number | undefined => {
    const path: string[] = [];
    const onPath = new Set<string>();
    let node: string | undefined = task;
    let base = 0;
    while (node !== undefined) {
      const known = level.get(node);
      if (known !== undefined) {
        base = known;
        break;
      }
      // A task on a cycle has no level; the cycle is reported on its own.
      if (onPath.has(node)) return undefined;
      onPath.add(node);
      path.push(node);
      node = parentOf.get(node);
    }
    for (let i = path.length - 1; i >= 0; i--) level.set(path[i]!, ++base);
    return level.get(task);
  };
  const problems: RuleProblem[] = [];
  for (const link of links) {
    const depth = levelOf(link.to);
    if (depth === undefined || depth <= MAX_HIERARCHY_DEPTH) continue;
    problems.push({
      table: "relationships",
      key: link.id,
      ref: link.ref,
      message: `relationship ${link.id} (${link.from} parent_of ${link.to}) puts ${link.to} at level ${depth} of its hierarchy; the limit is ${MAX_HIERARCHY_DEPTH} levels`,
    });
  }
  return problems;
}
