import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { backupStore } from "../../src/maintenance/backup.js";
import { runDoctor } from "../../src/maintenance/doctor.js";
import { exportStore } from "../../src/maintenance/export.js";
import { importStore } from "../../src/maintenance/import.js";
import { ArbeitService } from "../../src/service/arbeit-service.js";
import { PostgresTaskStore } from "../../src/store/postgres/postgres-task-store.js";
import type { SqlStore } from "../../src/store/sql/database.js";
import { SqliteTaskStore } from "../../src/store/sqlite/sqlite-task-store.js";
import { runCli } from "../helpers/cli.js";
import { adminQuery, dropSchema, postgresSkip, TEST_DATABASE_URL, uniqueSchema } from "../helpers/postgres.js";
import { requirement } from "../helpers/requirements.js";
import { openTestProject, TestClock } from "../helpers/service.js";
import { tempDir } from "../helpers/temp.js";
import { snapshot } from "../migrations/support.js";
import { populate } from "./populate.js";

const skip = await postgresSkip();
const EXPORTED_AT = new Date("2026-01-02T03:04:05.000Z");

async function exported(store: SqlStore): Promise<string> {
  let text = "";
  await exportStore(
    store,
    (chunk) => {
      text += chunk;
    },
    { now: () => EXPORTED_AT },
  );
  return text;
}

async function* linesOf(text: string): AsyncGenerator<string> {
  yield* text.split("\n");
}

describe("maintenance on Postgres", { skip, concurrency: 1 }, () => {
  const schemas: string[] = [];
  const fresh = () => {
    const schema = uniqueSchema("arbeit_maint");
    schemas.push(schema);
    return schema;
  };
  const { dir, cleanup } = tempDir();
  after(async () => {
    for (const schema of schemas) await dropSchema(schema);
    cleanup();
  });

  it("SQLite -> JSONL -> Postgres -> JSONL -> SQLite gives the same lines and the same rows", async () => {
    const source = await openTestProject();
    await populate(source, { tasks: 80 });
    const first = await exported(source.store);

    const pg = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema: fresh() });
    const loaded = await importStore(pg, linesOf(first), { keepClaims: true });
    assert.ok(loaded.rows > 500, `a realistic store (${loaded.rows} rows)`);
    const second = await exported(pg);
    assert.equal(second, first, "Postgres exports exactly what it imported");
    assert.equal((await runDoctor(pg)).ok, true, "and the doctor finds it sound");
    await pg.close();

    const back = await SqliteTaskStore.open(join(dir, "back.db"));
    await importStore(back, linesOf(second), { keepClaims: true });
    assert.equal(await exported(back), first);
    assert.deepEqual(snapshot(back.driver), snapshot(source.store.driver), "row for row, rowids and counters too");
    await back.close();
    await source.close();
  });

  it("doctor on Postgres finds rows that disagree with their history, and frees expired claims with --fix", async () => {
    const schema = fresh();
    const clock = new TestClock();
    // The lease runs on the store's clock: here the test's, so that an hour can pass at once.
    const pg = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema, clock: clock.now });
    const service = new ArbeitService(pg, { projectRoot: dir, now: clock.now });
    const caller = { session: "ses-doc", agent: "doc" };
    const a = (await service.createTask({ title: "kept" }, caller)).data.task.id;
    const b = (await service.createTask({ title: "claimed" }, caller)).data.task.id;
    await service.claim({ task_id: b, lease_seconds: 60 }, caller);
    const later = () => new Date(clock.now().getTime() + 3_600_000);
    assert.equal((await runDoctor(pg, { now: clock.now })).ok, true);

    const stale = await runDoctor(pg, { now: later });
    const expired = stale.checks.find((check) => check.name === "expired_claims")!;
    assert.equal(expired.total, 1);
    const fixed = await runDoctor(pg, { now: later, fix: true });
    assert.equal(fixed.ok, true);
    assert.equal(fixed.checks.find((check) => check.name === "expired_claims")!.fixed, 1);
    const events = await pg.read((tx) => tx.listEvents({ after_seq: 0, event_types: ["claim_expired"], limit: 10 }));
    assert.deepEqual(
      events.map((event) => [event.task_id, event.agent]),
      [[b, "arbeit-doctor"]],
    );

    await adminQuery(`UPDATE "${schema}".tasks SET title = 'tampered' WHERE id = $1`, [a]);
    const damaged = await runDoctor(pg, { now: later });
    assert.equal(damaged.ok, false);
    const history = damaged.checks.find((check) => check.name === "history")!;
    assert.match(history.findings[0]!.message, new RegExp(`task ${a}: title is "tampered"`));
    await pg.close();
  });

  it("backs a Postgres store up into a new SQLite file holding the same rows", async () => {
    const source = await openTestProject();
    await populate(source, { tasks: 30 });
    const pg = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema: fresh() });
    // Claims and work in progress included: a backup copies them as they are.
    await importStore(pg, linesOf(await exported(source.store)), { keepClaims: true });
    const file = join(dir, "pg-backup.db");
    const summary = await backupStore(pg, file);
    assert.equal(summary.integrity, "ok");
    const copy = await SqliteTaskStore.open(file);
    assert.equal(await exported(copy), await exported(pg));
    await copy.close();
    await assert.rejects(backupStore(pg, file), /already exists/);
    assert.deepEqual(
      ["", ".jsonl"].filter((suffix) => existsSync(`${file}.partial-${process.pid}${suffix}`)),
      [],
      "no scratch file left behind",
    );
    await pg.close();
    await source.close();
  });

  it("a store restored with pg_dump, which makes its tables in name order, exports a file that imports", async (t) => {
    const dumpTool = spawnSync("pg_dump", ["--version"]);
    const missing = requirement("pg_dump", dumpTool.status === 0 ? undefined : "pg_dump is not on PATH");
    if (missing) return t.skip(missing);
    const source = await openTestProject();
    await populate(source, { tasks: 20 });
    const original = fresh();
    const pg = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema: original });
    await importStore(pg, linesOf(await exported(source.store)), { keepClaims: true });
    await pg.close();
    await source.close();

    const dump = spawnSync(
      "pg_dump",
      ["--dbname", TEST_DATABASE_URL, "--schema", original, "--no-owner", "--no-privileges", "--inserts"],
      { encoding: "utf8", timeout: 60_000 },
    );
    assert.equal(dump.status, 0, dump.stderr);
    const restoredSchema = fresh();
    // As psql would replay it, under another schema name; psql's own meta-commands are not SQL.
    const sql = dump.stdout
      .split("\n")
      .filter((line) => !line.startsWith("\\"))
      .join("\n")
      .replaceAll(original, restoredSchema);
    await adminQuery(sql);

    const restored = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema: restoredSchema });
    const text = await exported(restored);
    await restored.close();
    const copy = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema: fresh() });
    await importStore(copy, linesOf(text), { keepClaims: true });
    // The tables come in another order (each after those it points at), with the same rows.
    const contents = (file: string) => {
      const [header, ...rows] = file.trimEnd().split("\n");
      const tables = JSON.parse(header!).tables as Array<{ name: string }>;
      return { tables: tables.sort((a, b) => a.name.localeCompare(b.name)), rows: rows.sort() };
    };
    assert.deepEqual(contents(await exported(copy)), contents(text), "the copy holds every row of the restored store");
    await copy.close();
  });

  it("import refuses a Postgres store with data, replaces it when asked, and leaves it untouched when the file is bad", async () => {
    const source = await openTestProject();
    await populate(source, { tasks: 20 });
    const text = await exported(source.store);
    const pg = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema: fresh() });
    await importStore(pg, linesOf(text));
    const service = new ArbeitService(pg, { projectRoot: dir });
    await service.createTask({ title: "made after the import" }, { session: null, agent: "x" });
    const before = await exported(pg);

    await assert.rejects(importStore(pg, linesOf(text)), /already holds data/);
    const truncated = text.split("\n").slice(0, -10).join("\n");
    await assert.rejects(importStore(pg, linesOf(truncated), { replace: true }), /incomplete/);
    assert.equal(await exported(pg), before, "a failed import leaves every row as it was");

    await importStore(pg, linesOf(text), { replace: true, keepClaims: true });
    assert.equal(await exported(pg), text);
    // The counters moved past the imported rows: new writes get fresh seq numbers.
    const created = await service.createTask({ title: "after replace" }, { session: null, agent: "x" });
    assert.equal(created.data.task.title, "after replace");
    await pg.close();
    await source.close();
  });

  it("the CLI runs doctor, export, backup and import against ARBEIT_DATABASE_URL", async () => {
    const { dir: project, cleanup: done } = tempDir();
    const env = { ARBEIT_DATABASE_URL: TEST_DATABASE_URL, ARBEIT_DATABASE_SCHEMA: fresh() };
    assert.equal((await runCli(["init"], { cwd: project, env })).code, 0);
    assert.equal((await runCli(["task", "create", "Shared work"], { cwd: project, env })).code, 0);
    const doctor = await runCli(["doctor", "--json"], { cwd: project, env });
    assert.equal(doctor.code, 0, doctor.stdout);
    assert.equal(doctor.json.ok, true);
    const file = join(project, "all.jsonl");
    assert.equal((await runCli(["export", file], { cwd: project, env })).code, 0);
    assert.match(readFileSync(file, "utf8"), /"title":"Shared work"/);
    const backup = await runCli(["backup", join(project, "copy.db")], { cwd: project, env });
    assert.equal(backup.code, 0, backup.stdout);
    const refused = await runCli(["import", file], { cwd: project, env });
    assert.equal(refused.code, 1);
    assert.match(refused.json.error.message, /already holds data/);
    const local = await runCli(["query", "tasks", "--db", join(project, "copy.db")], { cwd: project });
    assert.equal(local.code, 0, local.stdout);
    assert.equal(local.json.data.tasks[0].title, "Shared work");
    done();
  });
});
