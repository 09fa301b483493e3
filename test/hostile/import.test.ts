import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { before, it } from "node:test";
import { engineOf, SEQUENCE_TABLE } from "../../src/maintenance/engine.js";
import { RULE_COLUMNS } from "../../src/maintenance/row-rules.js";
import { LIMITS } from "../../src/schemas/limits.js";
import { PostgresTaskStore } from "../../src/store/postgres/postgres-task-store.js";
import { SqliteTaskStore } from "../../src/store/sqlite/sqlite-task-store.js";
import { appendRow, type Dump, editRow, findRow, lineOf, parseDump, renderDump } from "./dump.js";
import { forEachEngine, type HostileProject } from "./engines.js";

/**
 * `arbeit import` holds a file to the rules the tools hold their input to: every row (ids, enums,
 * field limits, JSON columns, counters) and the graph the rows make (no cycles, no hierarchy
 * deeper than the tools allow, references that resolve). A file that breaks one is refused with
 * INVALID_IMPORT naming the line to fix, and the store is left exactly as it was.
 */

/** What the store holds, table by table (row counts), read through the CLI as any user would. */
async function rowCounts(project: HostileProject): Promise<Record<string, number>> {
  const result = await project.cli(["export"]);
  assert.equal(result.code, 0, result.stdout + result.stderr);
  const header = JSON.parse(result.stdout.slice(0, result.stdout.indexOf("\n")));
  return Object.fromEntries(header.tables.map((t: any) => [t.name, t.rows]));
}

async function importText(project: HostileProject, text: string, args: string[] = []) {
  const file = join(project.dir, "import.jsonl");
  writeFileSync(file, text);
  return project.cli(["import", file, ...args]);
}

interface Expected {
  line: number;
  table?: string;
  column?: string;
}

forEachEngine("import refuses what the tools would refuse", (project) => {
  let dump: Dump;
  const ids: Record<string, string> = {};

  before(async () => {
    const source = await project();
    const create = async (args: Record<string, unknown>) => (await source.ok("arbeit_task_create", args)).task.id;
    ids.root = await create({ title: "level 1" });
    ids.level2 = await create({ title: "level 2", parent_id: ids.root });
    ids.level3 = await create({ title: "level 3", parent_id: ids.level2 });
    ids.level4 = await create({ title: "level 4", parent_id: ids.level3 });
    ids.a = await create({ title: "a" });
    ids.b = await create({ title: "b, waits for a", blocked_by: [ids.a] });
    const first = await source.ok("arbeit_context_add", {
      task_id: ids.a,
      type: "decision",
      content: "use x",
      metadata: { source: "test" },
    });
    await source.ok("arbeit_context_add", {
      task_id: ids.a,
      type: "decision",
      content: "use y",
      supersede_entry_id: first.entry.id,
    });
    await source.ok("arbeit_progress_add", { task_id: ids.a, items: ["one", "two"] });
    await source.ok("arbeit_memory", { action: "set", key: "style", value: { terse: true } });
    // A deleted task with a relationship left to it: history every real store carries.
    ids.gone = await create({ title: "deleted", blocked_by: [ids.b] });
    await source.ok("arbeit_task_delete", { task_id: ids.gone });
    const exported = await source.cli(["export"]);
    assert.equal(exported.code, 0, exported.stdout + exported.stderr);
    dump = parseDump(exported.stdout);
  });

  const edge = (from: string, type: string, to: string) => (row: Record<string, any>) =>
    row.from_task_id === ids[from] && row.type === type && row.to_task_id === ids[to] && row.removed_at === null;

  const CASES: Array<[string, (d: Dump) => Expected, RegExp?]> = [
    [
      "a blocks cycle",
      (d) => {
        const existing = findRow(d, "relationships", edge("a", "blocks", "b"));
        const line = appendRow(d, "relationships", {
          ...existing,
          id: "rel-cycle001",
          from_task_id: ids.b,
          to_task_id: ids.a,
        });
        return { line, table: "relationships" };
      },
      /cycle/,
    ],
    [
      "a parent_of cycle",
      (d) => {
        const existing = findRow(d, "relationships", edge("root", "parent_of", "level2"));
        const line = appendRow(d, "relationships", {
          ...existing,
          id: "rel-cycle002",
          from_task_id: ids.level4,
          to_task_id: ids.root,
        });
        return { line, table: "relationships" };
      },
      /cycle/,
    ],
    [
      "a hierarchy deeper than the tools allow",
      (d) => {
        const level4 = findRow(d, "tasks", (row) => row.id === ids.level4);
        appendRow(d, "tasks", { ...level4, id: "tkt-deep0001", title: "level 5" });
        const existing = findRow(d, "relationships", edge("root", "parent_of", "level2"));
        const line = appendRow(d, "relationships", {
          ...existing,
          id: "rel-deep0001",
          from_task_id: ids.level4,
          to_task_id: "tkt-deep0001",
        });
        return { line, table: "relationships" };
      },
      /deep|depth|levels/,
    ],
    [
      "a task id of the wrong form",
      (d) => ({
        line: editRow(
          d,
          "tasks",
          (row) => row.id === ids.a,
          (l) => {
            l.row.id = "TASK-1";
          },
        ),
        table: "tasks",
        column: "id",
      }),
    ],
    [
      "a reference of the wrong form",
      (d) => ({
        line: editRow(
          d,
          "progress_items",
          () => true,
          (l) => {
            l.row.task_id = "tkt-A";
          },
        ),
        table: "progress_items",
        column: "task_id",
      }),
    ],
    [
      "a title over its limit",
      (d) => ({
        line: editRow(
          d,
          "tasks",
          (row) => row.id === ids.b,
          (l) => {
            l.row.title = "t".repeat(LIMITS.title + 1);
          },
        ),
        table: "tasks",
        column: "title",
      }),
    ],
    [
      "an empty title",
      (d) => ({
        line: editRow(
          d,
          "tasks",
          (row) => row.id === ids.b,
          (l) => {
            l.row.title = "";
          },
        ),
        table: "tasks",
        column: "title",
      }),
    ],
    [
      "context over its limit",
      (d) => ({
        line: editRow(
          d,
          "context_entries",
          () => true,
          (l) => {
            l.row.content = "c".repeat(LIMITS.context_content + 1);
          },
        ),
        table: "context_entries",
        column: "content",
      }),
    ],
    [
      "a status outside the enum",
      (d) => ({
        line: editRow(
          d,
          "tasks",
          (row) => row.id === ids.b,
          (l) => {
            l.row.status = "done";
          },
        ),
        table: "tasks",
        column: "status",
      }),
    ],
    [
      "a task type outside the enum",
      (d) => ({
        line: editRow(
          d,
          "tasks",
          (row) => row.id === ids.b,
          (l) => {
            l.row.type = "story";
          },
        ),
        table: "tasks",
        column: "type",
      }),
    ],
    [
      "a context entry type outside the enum",
      (d) => ({
        line: editRow(
          d,
          "context_entries",
          () => true,
          (l) => {
            l.row.type = "gossip";
          },
        ),
        table: "context_entries",
        column: "type",
      }),
    ],
    [
      "a relationship type outside the enum",
      (d) => ({
        line: editRow(d, "relationships", edge("a", "blocks", "b"), (l) => {
          l.row.type = "loves";
        }),
        table: "relationships",
        column: "type",
      }),
    ],
    [
      "a string where a number belongs",
      (d) => ({
        line: editRow(
          d,
          "tasks",
          (row) => row.id === ids.b,
          (l) => {
            l.row.priority = "high";
          },
        ),
        table: "tasks",
        column: "priority",
      }),
    ],
    [
      "a priority out of range",
      (d) => ({
        line: editRow(
          d,
          "tasks",
          (row) => row.id === ids.b,
          (l) => {
            l.row.priority = 9;
          },
        ),
        table: "tasks",
        column: "priority",
      }),
    ],
    [
      "a memory value that is not JSON",
      (d) => ({
        line: editRow(
          d,
          "memory",
          () => true,
          (l) => {
            l.row.value = "{oops";
          },
        ),
        table: "memory",
        column: "value",
      }),
    ],
    [
      "a memory value over its limit",
      (d) => ({
        line: editRow(
          d,
          "memory",
          () => true,
          (l) => {
            l.row.value = JSON.stringify("m".repeat(LIMITS.memory_value_bytes));
          },
        ),
        table: "memory",
        column: "value",
      }),
    ],
    [
      "metadata that is not a JSON object",
      (d) => ({
        line: editRow(
          d,
          "context_entries",
          (row) => row.metadata !== null,
          (l) => {
            l.row.metadata = "[1, 2]";
          },
        ),
        table: "context_entries",
        column: "metadata",
      }),
    ],
    [
      "metadata that is not JSON",
      (d) => ({
        line: editRow(
          d,
          "context_entries",
          (row) => row.metadata !== null,
          (l) => {
            l.row.metadata = "{nope";
          },
        ),
        table: "context_entries",
        column: "metadata",
      }),
    ],
    [
      "an event payload that is not JSON",
      (d) => ({
        line: editRow(
          d,
          "events",
          () => true,
          (l) => {
            l.row.payload = "not json";
          },
        ),
        table: "events",
        column: "payload",
      }),
    ],
    ...(
      [
        ["negative", -1],
        ["not an integer", 1.5],
        ["beyond Number.MAX_SAFE_INTEGER", Number.MAX_SAFE_INTEGER + 2],
        ["lower than the highest event sequence", 1],
      ] as const
    ).map(
      ([what, seq]) =>
        [
          `an event counter ${what}`,
          (d: Dump) => ({
            line: editRow(
              d,
              "sqlite_sequence",
              () => true,
              (l) => {
                l.row.seq = seq;
              },
            ),
            table: "sqlite_sequence",
            column: "seq",
          }),
        ] as [string, (d: Dump) => Expected],
    ),
    [
      "an event sequence number that is not a positive integer",
      (d) => ({
        line: editRow(
          d,
          "events",
          () => true,
          (l) => {
            l.row.seq = -5;
          },
        ),
        table: "events",
        column: "seq",
      }),
    ],
    [
      "a row with a column the table does not have",
      (d) => ({
        line: editRow(
          d,
          "tasks",
          (row) => row.id === ids.b,
          (l) => {
            l.row.colour = "red";
          },
        ),
        table: "tasks",
        column: "colour",
      }),
      /unknown/,
    ],
    [
      "a row missing a column",
      (d) => ({
        line: editRow(
          d,
          "tasks",
          (row) => row.id === ids.b,
          (l) => delete l.row.created_at,
        ),
        table: "tasks",
        column: "created_at",
      }),
    ],
    [
      "a null where the schema says NOT NULL",
      (d) => ({
        line: editRow(
          d,
          "progress_items",
          () => true,
          (l) => {
            l.row.content = null;
          },
        ),
        table: "progress_items",
        column: "content",
      }),
    ],
    [
      "a rowid that is not an integer",
      (d) => ({
        line: editRow(
          d,
          "tasks",
          (row) => row.id === ids.b,
          (l) => {
            l.rowid = "seven" as unknown as number;
          },
        ),
        table: "tasks",
        column: "rowid",
      }),
    ],
    [
      "a duplicate primary key",
      (d) => {
        const copy = findRow(d, "tasks", (row) => row.id === ids.a);
        return { line: appendRow(d, "tasks", { ...copy }), table: "tasks" };
      },
    ],
    [
      "a second live parent for one task",
      (d) => {
        const existing = findRow(d, "relationships", edge("root", "parent_of", "level2"));
        const line = appendRow(d, "relationships", {
          ...existing,
          id: "rel-twoparnt",
          from_task_id: ids.a,
          to_task_id: ids.level2,
        });
        return { line, table: "relationships" };
      },
    ],
    [
      "a reference to a task that is not in the file",
      (d) => ({
        line: editRow(
          d,
          "progress_items",
          () => true,
          (l) => {
            l.row.task_id = "tkt-zzzzzzzz";
          },
        ),
        table: "progress_items",
        column: "task_id",
      }),
    ],
    [
      "a superseded_by that points at no entry",
      (d) => ({
        line: editRow(
          d,
          "context_entries",
          (row) => row.superseded_by !== null,
          (l) => {
            l.row.superseded_by = "ctx-zzzzzzzz";
          },
        ),
        table: "context_entries",
        column: "superseded_by",
      }),
    ],
    [
      "a line that is not JSON",
      (d) => {
        const index = d.rows.findIndex((r) => typeof r !== "string" && r.table === "progress_items");
        d.rows.splice(index, 0, "{oops");
        return { line: lineOf(index) };
      },
      /JSON/,
    ],
    [
      "a line that is not a row",
      (d) => {
        const index = d.rows.findIndex((r) => typeof r !== "string" && r.table === "progress_items");
        d.rows.splice(index, 0, '["tasks"]');
        return { line: lineOf(index) };
      },
    ],
    [
      "a header whose table list is malformed",
      (d) => {
        d.header.tables[0] = { ...d.header.tables[0], columns: "id, title" };
        return { line: 1 };
      },
    ],
  ];

  for (const [label, mangle, pattern] of CASES) {
    it(`${label}: INVALID_IMPORT naming the line, nothing imported`, async () => {
      const copy: Dump = structuredClone(dump);
      const expected = mangle(copy);
      const target = await project();
      const result = await importText(target, renderDump(copy));
      assert.equal(result.code, 1, result.stdout + result.stderr);
      const error = result.json?.error;
      assert.equal(error?.code, "INVALID_IMPORT", result.stdout + result.stderr);
      assert.equal(error.details?.line, expected.line, error.message);
      assert.match(error.message, new RegExp(`\\bline ${expected.line}\\b`, "i"));
      if (expected.table) assert.equal(error.details.table, expected.table, error.message);
      if (expected.column) assert.equal(error.details.column, expected.column, error.message);
      if (pattern) assert.match(error.message, pattern);
      const counts = await rowCounts(target);
      for (const [table, rows] of Object.entries(counts)) assert.equal(rows, 0, `${table} was written`);
    });
  }

  it("a file cut short is INVALID_IMPORT, and nothing is imported", async () => {
    const copy: Dump = structuredClone(dump);
    const text = renderDump(copy).trimEnd().split("\n").slice(0, -5).join("\n");
    const target = await project();
    const result = await importText(target, `${text}\n`);
    assert.equal(result.code, 1);
    assert.equal(result.json.error.code, "INVALID_IMPORT");
    assert.match(result.json.error.message, /incomplete/);
    const counts = await rowCounts(target);
    for (const [table, rows] of Object.entries(counts)) assert.equal(rows, 0, `${table} was written`);
  });

  it("--replace over a store holding data: a bad file leaves the old rows in place", async () => {
    const target = await project();
    await target.ok("arbeit_task_create", { title: "already here" });
    await target.ok("arbeit_memory", { action: "set", key: "kept", value: 1 });
    const before = await target.cli(["export"]);
    const copy: Dump = structuredClone(dump);
    const existing = findRow(copy, "relationships", edge("a", "blocks", "b"));
    appendRow(copy, "relationships", { ...existing, id: "rel-cycle003", from_task_id: ids.b, to_task_id: ids.a });
    const result = await importText(target, renderDump(copy), ["--replace"]);
    assert.equal(result.code, 1, result.stdout);
    assert.equal(result.json.error.code, "INVALID_IMPORT");
    const after = await target.cli(["export"]);
    const stamp = (text: string) => text.replace(/"exported_at":"[^"]+"/, '"exported_at":""');
    assert.equal(stamp(after.stdout), stamp(before.stdout));
    const tasks = (await target.ok("arbeit_query", { query: "tasks" })).tasks as Array<{ title: string }>;
    assert.deepEqual(
      tasks.map((t) => t.title),
      ["already here"],
    );
  });

  it("the file as exported still imports, with history such as deleted tasks, and doctor finds nothing", async () => {
    const target = await project();
    const result = await importText(target, renderDump(dump));
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const doctor = await target.cli(["doctor"]);
    assert.equal(doctor.code, 0, doctor.stdout);
    assert.ok(doctor.json.checks.some((c: { name: string }) => c.name === "rules"));
  });
});

forEachEngine("the row rules", (project, engine) => {
  it("cover every table and column of the schema, so a table a migration adds cannot go unchecked", async () => {
    const p = await project();
    const store =
      engine === "sqlite"
        ? await SqliteTaskStore.open(join(p.dir, ".arbeit", "arbeit.db"))
        : await PostgresTaskStore.open(p.env.ARBEIT_DATABASE_URL!, { schema: p.env.ARBEIT_DATABASE_SCHEMA! });
    try {
      const tables = await store.transaction("read", (db) => engineOf(db).tables(db));
      const schema = Object.fromEntries(tables.map((table) => [table.name, table.columns]));
      const { [SEQUENCE_TABLE]: counter, ...rules } = RULE_COLUMNS;
      assert.deepEqual(counter, ["name", "seq"]);
      assert.deepEqual(rules, schema);
    } finally {
      await store.close();
    }
  });
});
