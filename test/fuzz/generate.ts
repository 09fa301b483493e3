import { z } from "zod";
import type { JsonSchema } from "../../scripts/limits-doc.js";
import { ID_PREFIX } from "../../src/domain/ids.js";
import { QUERIES } from "../../src/service/queries.js";
import { TOOLS } from "../../src/tools/catalogue.js";
import { HOSTILE } from "../limits/hostile.js";
import type { Model } from "./model.js";

/**
 * Arguments for the fuzz test, decided at run time against the model (so ids point at tasks that
 * exist, were deleted, or never were). Four kinds: plausible calls an agent would make, calls
 * aimed at one rule (cycles, depth, one parent, supersede chains, deleted tasks) whose error code
 * the model predicts, calls derived from each tool's JSON Schema (in range and out of it), and
 * garbage. Tools the generator has no hand-written case for get schema-derived arguments, so a
 * tool added to the catalogue is fuzzed the day it appears.
 */
export class Rng {
  #state: number;
  constructor(seed: number) {
    this.#state = seed >>> 0 || 1;
  }
  next(): number {
    // mulberry32
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T | undefined {
    return items.length === 0 ? undefined : items[this.int(items.length)];
  }
  some<T>(items: readonly T[], max: number): T[] {
    const out: T[] = [];
    const count = this.int(max + 1);
    for (let i = 0; i < count && items.length > 0; i++) out.push(items[this.int(items.length)]!);
    return out;
  }
}

const schemas = new Map<string, JsonSchema>();
export function schemaOf(name: string, schema: z.ZodType): JsonSchema {
  let found = schemas.get(name);
  if (!found) {
    found = z.toJSONSchema(schema, { unrepresentable: "any" }) as JsonSchema;
    schemas.set(name, found);
  }
  return found;
}

export const toolSchema = (name: string) => schemaOf(name, TOOLS.find((tool) => tool.name === name)!.input);

export interface Plan {
  tool: string;
  args: unknown;
  /** The error code the model predicts (rule-targeted calls). */
  expect?: string;
  /** What this call was aimed at, for the failure message. */
  aim: string;
}

const TASK_TYPES = ["epic", "feature", "bug", "investigation", "chore"];
const STATUSES = ["open", "in_progress", "completed", "cancelled"];
const LEVELS = ["low", "medium", "high"];
const CONTEXT_TYPES = ["decision", "rationale", "attempt", "outcome", "blocker", "note", "reference", "user_input"];
const REL_TYPES = [
  "parent_of",
  "blocks",
  "relates_to",
  "duplicates",
  "splits_from",
  "child_of",
  "blocked_by",
  "duplicated_by",
  "split_into",
];

function text(rng: Rng, max = 60): string {
  if (rng.chance(0.3)) return rng.pick(HOSTILE)!.slice(0, max);
  const words = ["fix", "login", "cache", "épée", "数据", "🚀", "'x'", '"y"', "a;b", "$(z)", "\n"];
  return (
    Array.from({ length: 1 + rng.int(5) }, () => rng.pick(words))
      .join(" ")
      .slice(0, max) || "t"
  );
}

function wellFormedId(rng: Rng, prefix: string): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  return `${prefix}-${Array.from({ length: 8 }, () => alphabet[rng.int(alphabet.length)]).join("")}`;
}

function json(rng: Rng, depth = 0): unknown {
  const kind = rng.int(depth > 2 ? 4 : 6);
  if (kind === 0) return text(rng, 20);
  if (kind === 1) return rng.int(1000) - 500;
  if (kind === 2) return rng.chance(0.5);
  if (kind === 3) return null;
  if (kind === 4) return Array.from({ length: rng.int(3) }, () => json(rng, depth + 1));
  return Object.fromEntries(Array.from({ length: rng.int(3) }, () => [text(rng, 10), json(rng, depth + 1)]));
}

/** Ids of a kind, from the model: mostly live, some deleted, some never created, some malformed. */
function idFor(rng: Rng, model: Model, prefix: string): string {
  const roll = rng.next();
  if (prefix === ID_PREFIX.task) {
    if (roll < 0.7) return rng.pick(model.live())?.id ?? wellFormedId(rng, prefix);
    if (roll < 0.8) return rng.pick(model.deleted())?.id ?? wellFormedId(rng, prefix);
  }
  if (prefix === ID_PREFIX.context && roll < 0.8)
    return rng.pick([...model.contexts.keys()]) ?? wellFormedId(rng, prefix);
  if (prefix === ID_PREFIX.progress && roll < 0.8)
    return rng.pick([...model.progress.keys()]) ?? wellFormedId(rng, prefix);
  if (roll < 0.95) return wellFormedId(rng, prefix);
  return rng.pick([`${prefix}-`, `${prefix}-ABCDEFGH`, "not-an-id", `${prefix}-abcdefgh9`])!;
}

/** A value for `schema`: mostly valid, sometimes just outside a limit, sometimes the wrong type. */
export function fromSchema(schema: JsonSchema, rng: Rng, model: Model, name = ""): unknown {
  if (schema.anyOf) return fromSchema(rng.pick(schema.anyOf)!, rng, model, name);
  if (rng.chance(0.02)) return rng.pick([null, 42, "x", [], {}, true]);
  if (schema.enum) return rng.chance(0.93) ? rng.pick(schema.enum) : "bogus_value";
  switch (schema.type) {
    case "string": {
      const id = /^\^(\w+)-\[a-z0-9\]\{8\}\$$/.exec(schema.pattern ?? "");
      if (id) return idFor(rng, model, id[1]!);
      const max = schema.maxLength ?? 100;
      const roll = rng.next();
      if (roll < 0.04) return "x".repeat(max + 1);
      if (roll < 0.06) return "x".repeat(max);
      if (roll < 0.08) return "nul\u0000inside";
      if (roll < 0.1) return "";
      if (schema.pattern && rng.chance(0.7)) return rng.pick(["default", "ops", "7d", "24h", "list-1"]);
      return text(rng, Math.min(max, 60));
    }
    case "integer":
    case "number": {
      const min = schema.minimum ?? 0;
      const max = Math.min(schema.maximum ?? 1000, min + 5000);
      const roll = rng.next();
      if (roll < 0.05) return min - 1;
      if (roll < 0.1) return (schema.maximum ?? 1e9) + 1;
      if (roll < 0.12) return 1.5;
      return min + rng.int(max - min + 1);
    }
    case "boolean":
      return rng.chance(0.5);
    case "array": {
      const max = schema.maxItems ?? 5;
      const count = rng.chance(0.03) ? max + 1 : Math.max(schema.minItems ?? 0, rng.int(Math.min(max, 3) + 1));
      return Array.from({ length: count }, () => fromSchema(schema.items ?? {}, rng, model, name));
    }
    case "object": {
      if (!schema.properties) return rng.chance(0.9) ? (json(rng, 1) ?? {}) : [1];
      const out: Record<string, unknown> = {};
      const required = new Set(schema.required ?? []);
      for (const [key, prop] of Object.entries(schema.properties)) {
        if (key === "request_id") continue;
        if (required.has(key) ? rng.chance(0.97) : rng.chance(0.35)) out[key] = fromSchema(prop, rng, model, key);
      }
      if (rng.chance(0.03)) out.unexpected_field = 1;
      return out;
    }
    default:
      return json(rng);
  }
}

// ---- plausible calls ---------------------------------------------------------------------------

function liveTask(rng: Rng, model: Model): string | undefined {
  return rng.pick(model.live())?.id;
}

function typedFields(rng: Rng): Record<string, unknown> {
  if (rng.chance(0.5)) return {};
  return { type: rng.pick(TASK_TYPES), intent: text(rng), description: text(rng), plan: text(rng) };
}

const PLAUSIBLE: Record<string, (rng: Rng, model: Model) => unknown> = {
  arbeit_init: () => ({}),
  arbeit_task_create: (rng, model) => {
    // Parents are picked deepest-first half the time, so hierarchies reach the 4-level limit.
    const candidates = rng.chance(0.6) ? model.live().filter((t) => model.level(t.id) < 4) : [];
    const deepest = Math.max(0, ...candidates.map((t) => model.level(t.id)));
    const parent = rng.chance(0.5) ? candidates.filter((t) => model.level(t.id) === deepest) : candidates;
    return {
      title: text(rng),
      ...typedFields(rng),
      ...(parent.length > 0 ? { parent_id: rng.pick(parent)!.id } : {}),
      ...(rng.chance(0.3) ? { blocked_by: [...new Set(rng.some(model.live(), 2).map((t) => t.id))] } : {}),
      ...(rng.chance(0.2) ? { priority: rng.int(5) } : {}),
      ...(rng.chance(0.2) ? { risk: rng.pick(LEVELS) } : {}),
      ...(rng.chance(0.2) ? { impact: rng.pick(LEVELS) } : {}),
      ...(rng.chance(0.1) ? { status: rng.pick(STATUSES) } : {}),
    };
  },
  arbeit_task_get: (rng, model) => ({
    task_id: liveTask(rng, model) ?? wellFormedId(rng, "tkt"),
    ...(rng.chance(0.5)
      ? { include: rng.some(["context", "progress", "relationships", "children", "recent_events", "files"], 3) }
      : {}),
  }),
  arbeit_task_update: (rng, model) => {
    const id = liveTask(rng, model);
    if (!id) return { task_id: wellFormedId(rng, "tkt"), title: "x" };
    const args: Record<string, unknown> = { task_id: id };
    if (rng.chance(0.4)) args.status = rng.pick(STATUSES);
    if (rng.chance(0.3)) Object.assign(args, typedFields(rng));
    if (rng.chance(0.2)) args.title = text(rng);
    if (rng.chance(0.2)) args.priority = rng.int(5);
    if (rng.chance(0.15)) args.risk = rng.chance(0.3) ? null : rng.pick(LEVELS);
    if (rng.chance(0.15)) args.impact = rng.chance(0.3) ? null : rng.pick(LEVELS);
    if (rng.chance(0.2)) args.parent_id = rng.chance(0.3) ? null : liveTask(rng, model);
    if (rng.chance(0.2)) args.blocked_by = [...new Set(rng.some(model.live(), 2).map((t) => t.id))];
    if (rng.chance(0.1)) args.owner = rng.chance(0.5) ? null : text(rng, 20);
    return args;
  },
  arbeit_task_delete: (rng, model) => ({
    task_id: rng.pick(model.live().filter((t) => model.children(t.id).length === 0))?.id ?? wellFormedId(rng, "tkt"),
  }),
  arbeit_task_start_work: (rng, model) => ({ task_id: liveTask(rng, model) ?? wellFormedId(rng, "tkt") }),
  arbeit_task_stop_work: (rng, model) => ({ task_id: liveTask(rng, model) ?? wellFormedId(rng, "tkt") }),
  arbeit_context_add: (rng, model) => {
    const id = liveTask(rng, model) ?? wellFormedId(rng, "tkt");
    const open = [...model.contexts].filter(([, c]) => c.task === id && c.supersededBy === null).map(([key]) => key);
    return {
      task_id: id,
      type: rng.pick(CONTEXT_TYPES),
      content: text(rng),
      ...(rng.chance(0.3) ? { metadata: { source: text(rng, 10), n: rng.int(9) } } : {}),
      ...(open.length > 0 && rng.chance(0.4) ? { supersede_entry_id: rng.pick(open) } : {}),
    };
  },
  arbeit_progress_add: (rng, model) => ({
    task_id: liveTask(rng, model) ?? wellFormedId(rng, "tkt"),
    items: Array.from({ length: 1 + rng.int(3) }, () => text(rng)),
    ...(rng.chance(0.2) ? { completed: true } : {}),
  }),
  arbeit_progress_complete: (rng, model) => {
    const live = [...model.progress].filter(([, p]) => !model.tasks.get(p.task)?.deleted).map(([id]) => id);
    return {
      item_ids:
        live.length > 0 ? [...new Set(rng.some(live, 3))].concat(live[0]!).slice(0, 3) : [wellFormedId(rng, "prg")],
    };
  },
  arbeit_relationship: (rng, model) => {
    const type = rng.pick(REL_TYPES)!;
    const a = liveTask(rng, model) ?? wellFormedId(rng, "tkt");
    const b = liveTask(rng, model) ?? wellFormedId(rng, "tkt");
    const action = rng.chance(0.7) ? "add" : "remove";
    if (action === "remove" && rng.chance(0.7)) {
      // Mostly an edge that exists (orphans included), sometimes named by its inverse.
      const edges = [
        ...[...model.tasks.values()].flatMap((t) => [
          ...(t.parent ? [[t.parent, "parent_of", t.id]] : []),
          ...[...t.blockers].map((b) => [b, "blocks", t.id]),
        ]),
        ...[...model.otherEdges].map((key) => key.split(" ")),
      ] as Array<[string, string, string]>;
      const edge = rng.pick(edges);
      if (edge) {
        const inverse = {
          parent_of: "child_of",
          blocks: "blocked_by",
          duplicates: "duplicated_by",
          splits_from: "split_into",
        }[edge[1]];
        return inverse && rng.chance(0.3)
          ? { action, type: inverse, from_task_id: edge[2], to_task_id: edge[0] }
          : { action, type: edge[1], from_task_id: edge[0], to_task_id: edge[2] };
      }
    }
    return {
      action,
      type,
      from_task_id: a,
      to_task_id: b,
      ...(action === "add" && rng.chance(0.2) ? { metadata: { why: text(rng, 20) } } : {}),
    };
  },
  arbeit_query: (rng, model) => {
    const name = rng.pick(Object.keys(QUERIES))!;
    const params = fromSchema(
      schemaOf(`query:${name}`, QUERIES[name as keyof typeof QUERIES].params as z.ZodType),
      rng,
      model,
    );
    return { query: name, ...(rng.chance(0.9) ? { params } : {}) };
  },
  arbeit_task_claim: (rng, model) => {
    const action = rng.pick(["claim", "claim", "renew", "release"])!;
    const next = action === "claim" && rng.chance(0.3);
    return {
      ...(action !== "claim" || rng.chance(0.5) ? { action } : {}),
      ...(next ? { next: true } : { task_id: liveTask(rng, model) ?? wellFormedId(rng, "tkt") }),
      ...(rng.chance(0.4) ? { lease_seconds: 1 + rng.int(3600) } : {}),
    };
  },
  arbeit_resume: (rng) => ({
    ...(rng.chance(0.5) ? { peek: true } : {}),
    ...(rng.chance(0.3) ? { max_tokens: 400 + rng.int(3000) } : {}),
  }),
  arbeit_memory: (rng, model) => {
    const action = rng.pick(["set", "set", "get", "list", "delete", "gc", "similar", "merge"])!;
    const scope = rng.pick(["project", "list", "task", "agent"])!;
    const scoped =
      scope === "task"
        ? { scope, scope_id: liveTask(rng, model) ?? wellFormedId(rng, "tkt") }
        : scope === "project"
          ? {}
          : { scope };
    if (action === "gc") return rng.chance(0.5) ? { action } : { action, scope, ...scoped };
    if (action === "similar") return { action, ...scoped, ...(rng.chance(0.3) ? { key: "plan" } : {}) };
    if (action === "merge") {
      const keys = rng.chance(0.5) ? ["plan", "style"] : ["notes", "plan", text(rng, 20)];
      return {
        action,
        ...scoped,
        keys,
        ...(rng.chance(0.5) ? { key: rng.pick(["plan", "merged"])! } : {}),
        ...(rng.chance(0.5) ? { value: json(rng) ?? 0 } : {}),
      };
    }
    return {
      action,
      ...scoped,
      ...(action !== "list" ? { key: rng.pick(["plan", "style", "notes", text(rng, 20)]) } : {}),
      ...(action === "set" ? { value: json(rng) ?? 0 } : {}),
      ...(action === "set" && rng.chance(0.3) ? { ttl_seconds: 1 + rng.int(7200) } : {}),
      ...(action === "list" && rng.chance(0.3) ? { prefix: "p" } : {}),
    };
  },
};

// Writes whose plausible arguments mostly succeed: a batch of them mostly succeeds too, and one
// that fails must leave nothing behind (the harness checks that a failed call wrote no event).
PLAUSIBLE.arbeit_batch = (rng, model) => {
  const tools = [
    "arbeit_task_create",
    "arbeit_task_update",
    "arbeit_context_add",
    "arbeit_progress_add",
    "arbeit_memory",
  ];
  const operations: Array<Record<string, unknown>> = [];
  if (rng.chance(0.4)) {
    // A new task and what follows from it, through a $ref.
    operations.push({ tool: "arbeit_task_create", args: PLAUSIBLE.arbeit_task_create!(rng, model), ref: "new" });
    operations.push({ tool: "arbeit_context_add", args: { task_id: "$new", type: "note", content: text(rng, 40) } });
  }
  for (let i = rng.int(3); i >= 0; i--) {
    const tool = rng.pick(tools)!;
    operations.push({ tool, args: PLAUSIBLE[tool]!(rng, model) });
  }
  return { operations };
};

export function plausible(tool: string, rng: Rng, model: Model): Plan {
  const make = PLAUSIBLE[tool];
  return { tool, args: make ? make(rng, model) : fromSchema(toolSchema(tool), rng, model), aim: "plausible" };
}

export function schemaDerived(tool: string, rng: Rng, model: Model): Plan {
  return { tool, args: fromSchema(toolSchema(tool), rng, model), aim: "schema" };
}

export function garbage(tool: string, rng: Rng): Plan {
  const args = rng.pick([
    null,
    [],
    "text",
    42,
    { task_id: 7 },
    { title: ["x"] },
    { query: {} },
    { action: 1 },
    { "": "" },
  ]);
  return { tool, args, aim: "garbage" };
}

// ---- calls aimed at one rule -------------------------------------------------------------------

type Aimed = (rng: Rng, model: Model) => Plan | undefined;

const AIMED: Aimed[] = [
  (rng, model) => {
    // Close a cycle in blocks: X blocks Y already (maybe through others); add Y blocks X.
    const edges = model
      .live()
      .flatMap((t) => [...t.blockers].filter((b) => !model.tasks.get(b)?.deleted).map((b) => [b, t.id]));
    const edge = rng.pick(edges);
    if (!edge) return undefined;
    const [x, y] = edge as [string, string];
    return rng.chance(0.5)
      ? {
          tool: "arbeit_relationship",
          args: { action: "add", type: "blocks", from_task_id: y, to_task_id: x },
          expect: "CIRCULAR_DEPENDENCY",
          aim: "blocks cycle",
        }
      : {
          tool: "arbeit_relationship",
          args: { action: "add", type: "blocked_by", from_task_id: x, to_task_id: y },
          expect: "CIRCULAR_DEPENDENCY",
          aim: "blocks cycle (inverse name)",
        };
  },
  (rng, model) => {
    const t = rng.pick(model.live());
    if (!t) return undefined;
    return rng.chance(0.5)
      ? {
          tool: "arbeit_relationship",
          args: { action: "add", type: rng.pick(["blocks", "parent_of"]), from_task_id: t.id, to_task_id: t.id },
          expect: "CIRCULAR_DEPENDENCY",
          aim: "self edge",
        }
      : {
          tool: "arbeit_task_update",
          args: { task_id: t.id, blocked_by: [t.id] },
          expect: "INVALID_BLOCKER",
          aim: "blocked by itself",
        };
  },
  (rng, model) => {
    // A cycle in the hierarchy: make an ancestor the child of its descendant.
    const child = rng.pick(model.live().filter((t) => t.parent && !model.tasks.get(t.parent)?.deleted));
    if (!child) return undefined;
    return {
      tool: "arbeit_task_update",
      args: { task_id: child.parent, parent_id: child.id },
      expect: "CIRCULAR_DEPENDENCY",
      aim: "hierarchy cycle",
    };
  },
  (rng, model) => {
    // Depth: a child under a task already at level 4, or a subtree moved too deep.
    const deep = rng.pick(model.live().filter((t) => model.level(t.id) === 4));
    if (deep)
      return {
        tool: "arbeit_task_create",
        args: { title: "too deep", parent_id: deep.id },
        expect: "MAX_DEPTH_EXCEEDED",
        aim: "depth 5 by create",
      };
    const tall = model.live().filter((t) => model.height(t.id) >= 2);
    for (const subtree of tall) {
      const target = model
        .live()
        .find(
          (t) =>
            model.level(t.id) + model.height(subtree.id) > 4 &&
            !model.isAncestor(subtree.id, t.id) &&
            subtree.parent !== t.id,
        );
      if (target)
        return {
          tool: "arbeit_task_update",
          args: { task_id: subtree.id, parent_id: target.id },
          expect: "MAX_DEPTH_EXCEEDED",
          aim: "depth 5 by move",
        };
    }
    return undefined;
  },
  (rng, model) => {
    // One parent: a second parent_of into a task that has one.
    const child = rng.pick(model.live().filter((t) => t.parent && !model.tasks.get(t.parent)?.deleted));
    const other = rng.pick(model.live().filter((t) => child && t.id !== child.id && !model.isAncestor(child.id, t.id)));
    if (!child || !other) return undefined;
    return {
      tool: "arbeit_relationship",
      args: { action: "add", type: rng.pick(["parent_of"]), from_task_id: other.id, to_task_id: child.id },
      expect: "RELATIONSHIP_EXISTS",
      aim: "second parent",
    };
  },
  (rng, model) => {
    const gone = rng.pick(model.deleted());
    const live = rng.pick(model.live());
    if (!gone) return undefined;
    const cases: Plan[] = [
      { tool: "arbeit_task_get", args: { task_id: gone.id }, expect: "TASK_NOT_FOUND", aim: "get deleted" },
      {
        tool: "arbeit_task_update",
        args: { task_id: gone.id, title: "zombie" },
        expect: "TASK_NOT_FOUND",
        aim: "update deleted",
      },
      { tool: "arbeit_task_delete", args: { task_id: gone.id }, expect: "TASK_NOT_FOUND", aim: "delete twice" },
      {
        tool: "arbeit_task_create",
        args: { title: "orphan", parent_id: gone.id },
        expect: "PARENT_NOT_FOUND",
        aim: "parent deleted",
      },
      {
        tool: "arbeit_task_create",
        args: { title: "waits", blocked_by: [gone.id] },
        expect: "BLOCKER_NOT_FOUND",
        aim: "blocker deleted",
      },
      {
        tool: "arbeit_context_add",
        args: { task_id: gone.id, type: "note", content: "c" },
        expect: "TASK_NOT_FOUND",
        aim: "context on deleted",
      },
      {
        tool: "arbeit_progress_add",
        args: { task_id: gone.id, items: ["x"] },
        expect: "TASK_NOT_FOUND",
        aim: "progress on deleted",
      },
      { tool: "arbeit_task_start_work", args: { task_id: gone.id }, expect: "TASK_NOT_FOUND", aim: "work on deleted" },
      { tool: "arbeit_task_claim", args: { task_id: gone.id }, expect: "TASK_NOT_FOUND", aim: "claim deleted" },
    ];
    if (live) {
      cases.push({
        tool: "arbeit_relationship",
        args: { action: "add", type: "relates_to", from_task_id: live.id, to_task_id: gone.id },
        expect: "TASK_NOT_FOUND",
        aim: "link to deleted",
      });
      cases.push({
        tool: "arbeit_task_update",
        args: { task_id: live.id, parent_id: gone.id },
        expect: "PARENT_NOT_FOUND",
        aim: "re-parent under deleted",
      });
    }
    return rng.pick(cases);
  },
  (rng, model) => {
    // Supersede chains: only the newest entry of a chain can be superseded, and only on its task.
    const superseded = [...model.contexts].filter(
      ([, c]) => c.supersededBy !== null && !model.tasks.get(c.task)?.deleted,
    );
    const pick = rng.pick(superseded);
    if (pick && rng.chance(0.6)) {
      return {
        tool: "arbeit_context_add",
        args: { task_id: pick[1].task, type: "note", content: "again", supersede_entry_id: pick[0] },
        expect: "ALREADY_SUPERSEDED",
        aim: "supersede a superseded entry",
      };
    }
    const entry = rng.pick([...model.contexts].filter(([, c]) => !model.tasks.get(c.task)?.deleted));
    const other = rng.pick(model.live().filter((t) => entry && t.id !== entry[1].task));
    if (!entry || !other) return undefined;
    return {
      tool: "arbeit_context_add",
      args: { task_id: other.id, type: "note", content: "elsewhere", supersede_entry_id: entry[0] },
      expect: "ENTRY_NOT_FOUND",
      aim: "supersede another task's entry",
    };
  },
  (rng, model) => {
    const parent = rng.pick(model.live().filter((t) => model.children(t.id).length > 0));
    if (!parent) return undefined;
    return { tool: "arbeit_task_delete", args: { task_id: parent.id }, expect: "HAS_CHILDREN", aim: "delete a parent" };
  },
  (rng, model) => {
    const task = rng.pick(model.live().filter((t) => t.intent !== null && t.intent.trim() !== ""));
    if (!task) return undefined;
    return {
      tool: "arbeit_task_update",
      args: { task_id: task.id, intent: `changed: ${task.intent!.slice(0, 100)}` },
      expect: "INTENT_IMMUTABLE",
      aim: "change intent",
    };
  },
  (rng, model) => {
    const task = rng.pick(model.live());
    if (!task) return undefined;
    return {
      tool: "arbeit_task_create",
      args: { title: "dup", blocked_by: [task.id, task.id] },
      expect: "DUPLICATE_BLOCKERS",
      aim: "duplicate blockers",
    };
  },
  (rng) => ({
    tool: "arbeit_task_get",
    args: { task_id: wellFormedId(rng, "tkt") },
    expect: "TASK_NOT_FOUND",
    aim: "unknown id",
  }),
  (rng, model) => {
    const orphaned = [...model.progress].filter(([, p]) => model.tasks.get(p.task)?.deleted);
    const item = rng.pick(orphaned);
    if (!item) return undefined;
    return {
      tool: "arbeit_progress_complete",
      args: { item_ids: [item[0]] },
      expect: "ENTRY_NOT_FOUND",
      aim: "complete progress of a deleted task",
    };
  },
];

export function aimed(rng: Rng, model: Model): Plan | undefined {
  for (let tries = 0; tries < 4; tries++) {
    const plan = rng.pick(AIMED)!(rng, model);
    if (plan) return plan;
  }
  return undefined;
}
