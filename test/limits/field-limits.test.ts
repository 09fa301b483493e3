import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { LIMITS } from "../../src/schemas/limits.js";
import { INCLUDE_SECTIONS } from "../../src/service/briefing.js";
import { openTestProject, type TestProject } from "../helpers/service.js";

/**
 * Every documented maximum (docs/limits.md): a value at the limit is accepted, one over is
 * refused with FIELD_TOO_LARGE whose message names the field and the limit, and nothing is
 * written by the refused call. Names (agent, session, list, owner) have their own rule and code:
 * test/limits/names.test.ts.
 */

let project: TestProject;
let taskId: string;
let contextId: string;
let blockers: string[];
let progressIds: string[];

before(async () => {
  project = await openTestProject();
  taskId = (await project.ok("arbeit_task_create", { title: "host" })).task.id;
  contextId = (await project.ok("arbeit_context_add", { task_id: taskId, type: "note", content: "c" })).entry.id;
  blockers = [];
  for (let i = 0; i < LIMITS.id_list; i++) {
    blockers.push((await project.ok("arbeit_task_create", { title: `blocker ${i}` })).task.id);
  }
  const items = Array.from({ length: LIMITS.progress_items }, (_, i) => `step ${i}`);
  progressIds = (await project.ok("arbeit_progress_add", { task_id: taskId, items })).items.map((i: any) => i.id);
});
after(() => project.close());

function eventCount(): number {
  return Number((project.store.driver.prepare("SELECT COUNT(*) AS n FROM events").get() as { n: number }).n);
}

/** A JSON object whose UTF-8 serialisation is exactly `bytes` long; `unit` is repeated inside. */
function metadataOf(bytes: number, unit = "x"): Record<string, string> {
  const overhead = JSON.stringify({ k: "" }).length;
  const unitBytes = new TextEncoder().encode(unit).length;
  const body = bytes - overhead;
  assert.equal(body % unitBytes, 0, "pick a size the unit divides");
  return { k: unit.repeat(body / unitBytes) };
}

const s = (n: number, unit = "x") => unit.repeat(n);

interface Case {
  name: string;
  tool: string;
  field: string;
  limit: number;
  /** Arguments with the field's value at `size`. */
  args: (size: number) => Record<string, unknown>;
  /** Set up what an at-limit call needs each time (fresh task for immutable intent ...). */
  fresh?: () => Promise<Record<string, unknown>>;
}

const fresh = async () => ({ task_id: (await project.ok("arbeit_task_create", { title: "fresh" })).task.id });

const CASES: Case[] = [
  {
    name: "task title",
    tool: "arbeit_task_create",
    field: "title",
    limit: LIMITS.title,
    args: (n) => ({ title: s(n) }),
  },
  {
    name: "task intent",
    tool: "arbeit_task_create",
    field: "intent",
    limit: LIMITS.text,
    args: (n) => ({ title: "t", intent: s(n) }),
  },
  {
    name: "task description",
    tool: "arbeit_task_create",
    field: "description",
    limit: LIMITS.text,
    args: (n) => ({ title: "t", description: s(n) }),
  },
  {
    name: "task plan",
    tool: "arbeit_task_create",
    field: "plan",
    limit: LIMITS.text,
    args: (n) => ({ title: "t", plan: s(n) }),
  },
  {
    name: "task active_form",
    tool: "arbeit_task_create",
    field: "active_form",
    limit: LIMITS.name,
    args: (n) => ({ title: "t", active_form: s(n) }),
  },
  {
    name: "blocked_by on create",
    tool: "arbeit_task_create",
    field: "blocked_by",
    limit: LIMITS.id_list,
    args: (n) => ({ title: "t", blocked_by: Array.from({ length: n }, (_, i) => blockers[i % blockers.length]) }),
  },
  {
    name: "request_id",
    tool: "arbeit_task_create",
    field: "request_id",
    limit: LIMITS.name,
    args: (n) => ({ title: "t", request_id: `${Math.random().toString(36).slice(2)}${s(n)}`.slice(0, n) }),
  },
  {
    name: "title on update",
    tool: "arbeit_task_update",
    field: "title",
    limit: LIMITS.title,
    args: (n) => ({ title: s(n) }),
    fresh,
  },
  {
    name: "intent on update",
    tool: "arbeit_task_update",
    field: "intent",
    limit: LIMITS.text,
    args: (n) => ({ intent: s(n) }),
    fresh,
  },
  {
    name: "description on update",
    tool: "arbeit_task_update",
    field: "description",
    limit: LIMITS.text,
    args: (n) => ({ description: s(n) }),
    fresh,
  },
  {
    name: "plan on update",
    tool: "arbeit_task_update",
    field: "plan",
    limit: LIMITS.text,
    args: (n) => ({ plan: s(n) }),
    fresh,
  },
  {
    name: "active_form on update",
    tool: "arbeit_task_update",
    field: "active_form",
    limit: LIMITS.name,
    args: (n) => ({ active_form: s(n) }),
    fresh,
  },
  {
    name: "blocked_by on update",
    tool: "arbeit_task_update",
    field: "blocked_by",
    limit: LIMITS.id_list,
    args: (n) => ({ blocked_by: Array.from({ length: n }, (_, i) => blockers[i % blockers.length]) }),
    fresh,
  },
  {
    name: "context content",
    tool: "arbeit_context_add",
    field: "content",
    limit: LIMITS.context_content,
    args: (n) => ({ task_id: taskId, type: "note", content: s(n) }),
  },
  {
    name: "context metadata (bytes, ASCII)",
    tool: "arbeit_context_add",
    field: "metadata",
    limit: LIMITS.metadata_bytes,
    args: (n) => ({ task_id: taskId, type: "note", content: "c", metadata: metadataOf(n) }),
  },
  {
    name: "context metadata (bytes, 2-byte characters)",
    tool: "arbeit_context_add",
    field: "metadata",
    limit: LIMITS.metadata_bytes,
    // "é" is two bytes: the limit counts UTF-8 bytes, not characters (one over rounds up to two).
    args: (n) => ({ task_id: taskId, type: "note", content: "c", metadata: metadataOf(n + (n % 2), "é") }),
  },
  {
    name: "relationship metadata",
    tool: "arbeit_relationship",
    field: "metadata",
    limit: LIMITS.metadata_bytes,
    args: (n) => ({ action: "add", type: "relates_to", metadata: metadataOf(n) }),
    fresh: async () => ({ from_task_id: taskId, to_task_id: (await fresh()).task_id }),
  },
  {
    name: "progress item",
    tool: "arbeit_progress_add",
    field: "items",
    limit: LIMITS.progress_item,
    args: (n) => ({ task_id: taskId, items: [s(n)] }),
  },
  {
    name: "progress items per call",
    tool: "arbeit_progress_add",
    field: "items",
    limit: LIMITS.progress_items,
    args: (n) => ({ task_id: taskId, items: Array.from({ length: n }, (_, i) => `item ${i}`) }),
  },
  {
    name: "progress item_ids per call",
    tool: "arbeit_progress_complete",
    field: "item_ids",
    limit: LIMITS.id_list,
    args: (n) => ({ item_ids: Array.from({ length: n }, (_, i) => progressIds[i % progressIds.length]) }),
  },
  {
    name: "memory key",
    tool: "arbeit_memory",
    field: "key",
    limit: LIMITS.name,
    args: (n) => ({ action: "set", key: s(n), value: 1 }),
  },
  {
    name: "memory scope_id",
    tool: "arbeit_memory",
    field: "scope_id",
    limit: LIMITS.name,
    args: (n) => ({ action: "set", scope: "list", scope_id: s(n), key: "k", value: 1 }),
  },
  {
    name: "memory prefix",
    tool: "arbeit_memory",
    field: "prefix",
    limit: LIMITS.name,
    args: (n) => ({ action: "list", prefix: s(n) }),
  },
  {
    name: "memory value (bytes of JSON)",
    tool: "arbeit_memory",
    field: "value",
    limit: LIMITS.memory_value_bytes,
    args: (n) => ({ action: "set", key: "v", value: metadataOf(n) }),
  },
  {
    name: "query file_path",
    tool: "arbeit_query",
    field: "params.file_path",
    limit: LIMITS.file_path,
    args: (n) => ({ query: "tasks_for_file", params: { file_path: s(n) } }),
  },
];

describe("every documented limit: at the limit accepted, one over refused", () => {
  for (const c of CASES) {
    it(`${c.name} (${c.tool} ${c.field}, limit ${c.limit})`, async () => {
      const base = c.fresh ? await c.fresh() : {};
      const atLimit = await project.call(c.tool, { ...base, ...c.args(c.limit) });
      assert.equal(atLimit.success, true, `at the limit: ${JSON.stringify(atLimit).slice(0, 300)}`);

      const base2 = c.fresh ? await c.fresh() : {};
      const before = eventCount();
      const over = await project.call(c.tool, { ...base2, ...c.args(c.limit + 1) });
      assert.equal(over.success, false);
      if (over.success) return;
      assert.equal(over.error.code, "FIELD_TOO_LARGE", over.error.message);
      assert.match(over.error.message, new RegExp(`${c.field.replaceAll(".", "\\.")}(\\.\\d+)?: `), "names the field");
      assert.match(over.error.message, new RegExp(`limit ${c.limit}\\b`), "names the limit");
      assert.equal(eventCount(), before, "a refused call writes nothing");
    });
  }
});

describe("limits that are not sizes", () => {
  it("metadata nested deeper than the limit is FIELD_TOO_LARGE naming the depth", async () => {
    const nest = (depth: number) => {
      let value: unknown = "leaf";
      for (let i = 0; i < depth; i++) value = { d: value };
      return value as Record<string, unknown>;
    };
    // The metadata object itself is level 0; LIMITS.json_depth levels below it are allowed.
    const ok = await project.call("arbeit_context_add", {
      task_id: taskId,
      type: "note",
      content: "c",
      metadata: nest(LIMITS.json_depth),
    });
    assert.equal(ok.success, true, JSON.stringify(ok));
    const deep = await project.call("arbeit_context_add", {
      task_id: taskId,
      type: "note",
      content: "c",
      metadata: nest(LIMITS.json_depth + 1),
    });
    assert.equal(deep.success, false);
    if (deep.success) return;
    assert.equal(deep.error.code, "FIELD_TOO_LARGE");
    assert.match(deep.error.message, new RegExp(`metadata: .*limit ${LIMITS.json_depth} levels`));
  });

  it("a million levels of nesting is refused without exhausting the stack", async () => {
    let value: unknown = 1;
    for (let i = 0; i < 1_000_000; i++) value = [value];
    const metadata = await project.call("arbeit_context_add", {
      task_id: taskId,
      type: "note",
      content: "c",
      metadata: { a: value },
    });
    assert.equal(metadata.success === false && metadata.error.code, "FIELD_TOO_LARGE");
    const memory = await project.call("arbeit_memory", { action: "set", key: "deep", value });
    assert.equal(memory.success === false && memory.error.code, "FIELD_TOO_LARGE");
  });

  for (const [label, metadata] of [
    ["an array", [1, 2]],
    ["a string", "note"],
    ["a number", 3],
    ["null", null],
    ["a boolean", true],
  ] as const) {
    it(`metadata that is ${label} is INVALID_METADATA`, async () => {
      const result = await project.call("arbeit_context_add", {
        task_id: taskId,
        type: "note",
        content: "c",
        metadata,
      });
      assert.equal(result.success, false);
      if (result.success) return;
      assert.equal(result.error.code, "INVALID_METADATA");
      assert.match(result.error.message, /metadata: /);
    });
  }

  it("metadata holding a non-JSON number (from a library caller) is INVALID_METADATA", async () => {
    const result = await project.call("arbeit_context_add", {
      task_id: taskId,
      type: "note",
      content: "c",
      metadata: { n: Number.POSITIVE_INFINITY },
    });
    assert.equal(result.success === false && result.error.code, "INVALID_METADATA");
  });

  const RANGES: Array<[string, string, Record<string, unknown>, number]> = [
    ["priority", "arbeit_task_create", { title: "t", priority: 5 }, 4],
    ["lease_seconds", "arbeit_task_claim", { next: true, lease_seconds: 604_801 }, 604_800],
    ["max_tokens", "arbeit_resume", { peek: true, max_tokens: 50_001 }, 50_000],
    [
      "ttl_seconds",
      "arbeit_memory",
      { action: "set", key: "t", value: 1, ttl_seconds: LIMITS.ttl_seconds + 1 },
      LIMITS.ttl_seconds,
    ],
    ["limit", "arbeit_memory", { action: "list", limit: LIMITS.query_limit + 1 }, LIMITS.query_limit],
    ["params.limit", "arbeit_query", { query: "tasks", params: { limit: LIMITS.query_limit + 1 } }, LIMITS.query_limit],
  ];
  for (const [field, tool, args, limit] of RANGES) {
    it(`a number past its range (${tool} ${field}) is INVALID_ARGUMENT naming the field and the limit`, async () => {
      const result = await project.call(tool, args);
      assert.equal(result.success, false);
      if (result.success) return;
      assert.equal(result.error.code, "INVALID_ARGUMENT");
      assert.match(result.error.message, new RegExp(`${field.replace(".", "\\.")}: too large \\(limit ${limit}\\)`));
    });
  }

  it("a duration too long to be a date is refused, not an internal error", async () => {
    const result = await project.call("arbeit_query", { query: "recent_activity", params: { since: "99999999999d" } });
    assert.equal(result.success === false && result.error.code, "INVALID_ARGUMENT");
  });

  it("include lists at most every section once", async () => {
    const include = Array.from({ length: INCLUDE_SECTIONS.length + 1 }, () => "context");
    const result = await project.call("arbeit_task_get", { task_id: taskId, include });
    assert.equal(result.success === false && result.error.code, "FIELD_TOO_LARGE");
  });
});

describe("ids", () => {
  const BAD_IDS = [
    "tkt-",
    "tkt-ABCDEFGH",
    "tkt-abcdefgh1",
    "tkt-abcdefg",
    "ctx-abcdefgh",
    " tkt-abcdefgh",
    "tkt-abcdefgh\n",
    "x".repeat(10_000),
  ];
  const FIELDS: Array<[string, string, (id: string) => Record<string, unknown>]> = [
    ["task_id", "arbeit_task_get", (id) => ({ task_id: id })],
    ["parent_id", "arbeit_task_create", (id) => ({ title: "t", parent_id: id })],
    ["blocked_by", "arbeit_task_create", (id) => ({ title: "t", blocked_by: [id] })],
    [
      "from_task_id",
      "arbeit_relationship",
      (id) => ({ action: "add", type: "blocks", from_task_id: id, to_task_id: taskId }),
    ],
    [
      "to_task_id",
      "arbeit_relationship",
      (id) => ({ action: "add", type: "blocks", from_task_id: taskId, to_task_id: id }),
    ],
    [
      "supersede_entry_id",
      "arbeit_context_add",
      (id) => ({ task_id: taskId, type: "note", content: "c", supersede_entry_id: id }),
    ],
    ["item_ids", "arbeit_progress_complete", (id) => ({ item_ids: [id] })],
    ["task_id", "arbeit_task_claim", (id) => ({ task_id: id })],
  ];
  for (const [field, tool, args] of FIELDS) {
    it(`${tool} ${field}: malformed ids are INVALID_ID naming the field`, async () => {
      for (const bad of BAD_IDS) {
        const value = field === "supersede_entry_id" ? bad.replace("ctx-", "tkt-") : bad;
        const result = await project.call(tool, args(value));
        assert.equal(result.success, false, `${JSON.stringify(value)} accepted`);
        if (result.success) continue;
        assert.equal(result.error.code, "INVALID_ID", `${JSON.stringify(value)}: ${result.error.message}`);
        assert.match(result.error.message, new RegExp(`${field}(\\.0)?: `));
      }
    });
  }

  it("a well-formed context id is accepted where one is expected", async () => {
    const result = await project.call("arbeit_context_add", {
      task_id: taskId,
      type: "note",
      content: "newer",
      supersede_entry_id: contextId,
    });
    assert.equal(result.success, true);
  });
});
