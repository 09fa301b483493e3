import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { progressBar } from "../../src/cli/progress-bar.js";
import { runDoctor } from "../../src/maintenance/doctor.js";
import {
  describeTable,
  EXPORT_FORMAT,
  EXPORT_FORMAT_VERSION,
  exportTables,
  tableRows,
} from "../../src/maintenance/export-format.js";
import { listMigrations } from "../../src/store/sqlite/migrate.js";
import { openDriver } from "../../src/store/sqlite/open-driver.js";
import { SqliteDb } from "../../src/store/sqlite/sqlite-db.js";
import { SqliteTaskStore } from "../../src/store/sqlite/sqlite-task-store.js";
import { runCli } from "../helpers/cli.js";
import { openTestProject, type TestProject } from "../helpers/service.js";
import { tempDir } from "../helpers/temp.js";
import { databaseFromFixture, schemaOf, snapshot } from "../migrations/support.js";
import { populate } from "./populate.js";

/**
 * arbeit export / import: a JSONL dump of every table, which loaded into an empty store gives
 * back the same state and history exactly — ids, sequence numbers, timestamps, rowids.
 */
const TASKS = 5000;
let source: TestProject;
let scratch: { dir: string; cleanup(): void };
let dump: string;

async function freshProject(): Promise<string> {
  const { dir } = tempDir();
  const init = await runCli(["init"], { cwd: dir });
  assert.equal(init.code, 0, init.stdout);
  return dir;
}

async function snapshotOf(dbPath: string) {
  const driver = await openDriver(dbPath);
  try {
    return snapshot(driver);
  } finally {
    driver.close();
  }
}

const dbOf = (dir: string) => join(dir, ".arbeit", "arbeit.db");

function assertSameTables(actual: Map<string, unknown>, expected: Map<string, any>): void {
  assert.deepEqual([...actual.keys()], [...expected.keys()]);
  for (const [table, want] of expected) {
    const got = actual.get(table) as any;
    assert.deepEqual(got.columns, want.columns, `${table} columns`);
    assert.equal(got.rows.length, want.rows.length, `${table} row count`);
    for (let i = 0; i < want.rows.length; i++) assert.deepEqual(got.rows[i], want.rows[i], `${table} row ${i + 1}`);
  }
}

before(async () => {
  source = await openTestProject();
  await populate(source, { tasks: TASKS, oneTransaction: true });
  scratch = tempDir();
  dump = join(scratch.dir, "dump.jsonl");
});
after(async () => {
  await source.close();
  scratch.cleanup();
});

describe(`export and import of a store with ${TASKS} tasks`, () => {
  it("exports every table through the CLI, header first", async () => {
    const result = await runCli(["export", dump], { cwd: source.dir });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(result.stderr, "", "no progress bar when stderr is not a terminal");
    const lines = readFileSync(dump, "utf8").trimEnd().split("\n");
    const header = JSON.parse(lines[0]!);
    assert.equal(header.format, EXPORT_FORMAT);
    assert.equal(header.format_version, EXPORT_FORMAT_VERSION);
    assert.equal(header.schema_version, listMigrations().length);
    const tables = source.store.driver
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid")
      .all<{ name: string }>()
      .map((t) => t.name);
    assert.deepEqual(header.tables.map((t: any) => t.name).sort(), [...tables].sort());
    const total = header.tables.reduce((sum: number, t: any) => sum + t.rows, 0);
    assert.equal(lines.length - 1, total);
    assert.equal(result.json.data.rows, total);
    assert.equal(header.tables.find((t: any) => t.name === "tasks").rows, TASKS + 2);
  });

  it("restores into an empty store (--keep-claims) and reproduces every table row by row", async () => {
    const target = await freshProject();
    const result = await runCli(["import", dump, "--keep-claims"], { cwd: target });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(result.json.data.replaced, false);
    const imported = await snapshotOf(dbOf(target));
    assertSameTables(imported, await snapshotOf(source.dbPath));
    const metadata = (imported.get("tasks")?.rows ?? []).map((row) => row.metadata).filter((m) => m !== null);
    assert.ok(metadata.includes('{"jira":"PAY-6","points":8,"done":6}'), `task metadata is carried: ${metadata}`);
    const reinforced = (imported.get("memory")?.rows ?? []).map((row) => row.reinforced);
    assert.ok(reinforced.includes(2), `memory set twice keeps its count: ${reinforced}`);

    const store = await SqliteTaskStore.open(dbOf(target));
    // Triggers set aside during the load are back, exactly as the schema defines them.
    assert.deepEqual(schemaOf(store.driver), schemaOf(source.store.driver));
    const report = await runDoctor(store);
    assert.equal(report.ok, true, JSON.stringify(report.checks.filter((c) => !c.ok)));
    // The next event continues the sequence where the source left off.
    const last = store.driver.prepare("SELECT MAX(seq) AS seq FROM events").get<{ seq: number }>()!.seq;
    await store.close();
    const next = await runCli(["call", "arbeit_task_create", '{"title": "after import"}'], { cwd: target });
    assert.equal(next.code, 0);
    const events = await runCli(
      ["call", "arbeit_query", JSON.stringify({ query: "events", params: { after_seq: last } })],
      {
        cwd: target,
      },
    );
    assert.equal(events.json.data.events[0].seq, last + 1);
  });

  it("refuses a store that holds data, leaving every row as it was, and --replace swaps it out completely", async () => {
    const target = await freshProject();
    const here = async (tool: string, args: Record<string, unknown>) => {
      const result = await runCli(["call", tool, JSON.stringify(args)], { cwd: target });
      assert.equal(result.code, 0, result.stdout + result.stderr);
      return result.json.data;
    };
    const id = (await here("arbeit_task_create", { title: "already here" })).task.id;
    await here("arbeit_task_update", { task_id: id, priority: 0 });
    await here("arbeit_context_add", { task_id: id, type: "decision", content: "kept" });
    await here("arbeit_memory", { action: "set", key: "kept", value: 1 });
    const before = await snapshotOf(dbOf(target));
    const refused = await runCli(["import", dump], { cwd: target });
    assert.equal(refused.code, 1);
    assert.match(refused.json.error.message, /already holds data/);
    // An agent follows a suggestion literally: it must not propose discarding the data.
    assert.match(refused.json.error.suggestions.join(" "), /empty store/);
    assert.doesNotMatch(refused.json.error.suggestions.join(" "), /--replace|arbeit init/);
    // Every table row for row, rowids included: the task at its version, its context, the
    // memory, and the event log up to the same last seq.
    assertSameTables(await snapshotOf(dbOf(target)), before);
    assert.equal((before.get("tasks") as any).rows[0].version, 2);

    const replaced = await runCli(["import", dump, "--replace", "--keep-claims"], { cwd: target });
    assert.equal(replaced.code, 0, replaced.stdout);
    assert.equal(replaced.json.data.replaced, true);
    assertSameTables(await snapshotOf(dbOf(target)), await snapshotOf(source.dbPath));
  });

  it("exports to stdout when no file is named", async () => {
    const result = await runCli(["export"], { cwd: source.dir });
    assert.equal(result.code, 0);
    const stamp = (text: string) => text.replace(/"exported_at":"[^"]+"/, '"exported_at":""');
    assert.equal(stamp(result.stdout), stamp(readFileSync(dump, "utf8")));
    const first = JSON.parse(result.stdout.slice(0, result.stdout.indexOf("\n")));
    assert.equal(first.format, EXPORT_FORMAT);
  });
});

describe("import is all or nothing", () => {
  let small: string;
  before(async () => {
    const p = await openTestProject();
    await populate(p, { tasks: 60 });
    small = join(scratch.dir, "small.jsonl");
    const result = await runCli(["export", small], { cwd: p.dir });
    assert.equal(result.code, 0);
    await p.close();
  });
  const BROKEN: Array<[string, (text: string) => string, RegExp]> = [
    ["a truncated file", (text) => text.split("\n").slice(0, -20).join("\n"), /incomplete/],
    ["a file that is not an export", () => '{"hello": "world"}\n', /not an Arbeit export/],
    ["an empty file", () => "", /not an Arbeit export/],
    ["a row that is not JSON", (text) => text.replace(/\n(\{"table":"tasks")/, "\n{oops\n$1"), /not valid JSON/],
    [
      "a row for a table the header does not list",
      (text) => `${text.trimEnd()}\n{"table":"ghosts","row":{"id":"x"}}\n`,
      /does not list/,
    ],
    [
      "rows that break foreign keys",
      (text) =>
        text
          .split("\n")
          .filter((line) => !line.startsWith('{"table":"tasks"'))
          .join("\n")
          .replace(/"name":"tasks","columns":(\[[^\]]*\]),"rows":\d+/, '"name":"tasks","columns":$1,"rows":0'),
      /names tasks row tkt-\w+, which does not exist/,
    ],
  ];
  for (const [label, mangle, pattern] of BROKEN) {
    it(`${label}: refused, the store left empty`, async () => {
      const file = join(scratch.dir, `broken-${label.replaceAll(" ", "-")}.jsonl`);
      writeFileSync(file, mangle(readFileSync(small, "utf8")));
      const target = await freshProject();
      const result = await runCli(["import", file], { cwd: target });
      assert.equal(result.code, 1, result.stdout);
      assert.match(result.json.error.message, pattern);
      const after = await snapshotOf(dbOf(target));
      for (const [table, { rows }] of after) assert.equal(rows.length, 0, `${table} was written`);
    });
  }

  it("an export from a newer schema is SCHEMA_TOO_NEW", async () => {
    const text = readFileSync(small, "utf8");
    const file = join(scratch.dir, "future.jsonl");
    writeFileSync(file, text.replace(/"schema_version":\d+/, `"schema_version":${listMigrations().length + 1}`));
    const result = await runCli(["import", file], { cwd: await freshProject() });
    assert.equal(result.code, 1);
    assert.equal(result.json.error.code, "SCHEMA_TOO_NEW");
  });

  it("a missing file is a clear error", async () => {
    const result = await runCli(["import", "nope.jsonl"], { cwd: await freshProject() });
    assert.equal(result.code, 1);
    assert.match(result.json.error.message, /no file/);
  });
});

describe("exports from older schemas, and tables added later", () => {
  it("a schema v1 export is migrated on the way in, giving what migrating the database gives", async () => {
    const { dir, cleanup } = tempDir();
    const v1 = join(dir, "v1.db");
    await databaseFromFixture(v1, 1);
    const driver = await openDriver(v1);
    const db = new SqliteDb(driver);
    const tables = await exportTables(db);
    const lines = [
      JSON.stringify({
        format: EXPORT_FORMAT,
        format_version: EXPORT_FORMAT_VERSION,
        schema_version: 1,
        exported_at: new Date().toISOString(),
        tables: tables.map(describeTable),
      }),
    ];
    for (const table of tables) for await (const row of tableRows(db, table)) lines.push(JSON.stringify(row));
    driver.close();
    const file = join(dir, "v1.jsonl");
    writeFileSync(file, `${lines.join("\n")}\n`);

    const target = await freshProject();
    const result = await runCli(["import", file, "--keep-claims"], { cwd: target });
    assert.equal(result.code, 0, result.stdout);
    assert.equal(result.json.data.export_schema_version, 1);
    assert.equal(result.json.data.schema_version, listMigrations().length);

    const migrated = join(dir, "migrated.db");
    await databaseFromFixture(migrated, 1);
    await (await SqliteTaskStore.open(migrated)).close();
    assertSameTables(await snapshotOf(dbOf(target)), await snapshotOf(migrated));
    cleanup();
  });

  it("a table the exporter has never heard of is exported too", async () => {
    const p = await openTestProject();
    await p.ok("arbeit_task_create", { title: "x" });
    p.store.driver.exec("CREATE TABLE future_feature (id TEXT PRIMARY KEY, note TEXT) WITHOUT ROWID");
    p.store.driver.exec("INSERT INTO future_feature VALUES ('a', 'from a later migration')");
    const result = await runCli(["export"], { cwd: p.dir });
    const lines = result.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    assert.ok(lines[0].tables.some((t: any) => t.name === "future_feature" && t.rows === 1));
    assert.ok(lines.some((l) => l.table === "future_feature" && l.row.note === "from a later migration"));
    await p.close();
  });
});

describe("the progress bar", () => {
  it("draws on a terminal and stays silent otherwise", () => {
    const stream = (isTTY: boolean) => {
      const out = {
        isTTY,
        text: "",
        write(chunk: string) {
          out.text += chunk;
          return true;
        },
      };
      return out;
    };
    const tty = stream(true);
    const bar = progressBar("export", tty as unknown as NodeJS.WriteStream);
    bar.update(50, 200);
    bar.update(200, 200);
    bar.finish();
    assert.match(tty.text, /export \[#{8}-{22}\]\s+25% 50\/200/);
    assert.match(tty.text, /100% 200\/200/);
    const pipe = stream(false);
    const quiet = progressBar("export", pipe as unknown as NodeJS.WriteStream);
    quiet.update(1, 2);
    quiet.finish();
    assert.equal(pipe.text, "");
  });
});
