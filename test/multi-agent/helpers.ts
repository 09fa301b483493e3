import assert from "node:assert/strict";
import { after, before } from "node:test";
import type { ArbeitService } from "../../src/service/arbeit-service.js";
import { openProject } from "../../src/service/project.js";
import { PostgresTaskStore } from "../../src/store/postgres/postgres-task-store.js";
import type { SqlStore, SqlValue } from "../../src/store/sql/database.js";
import { SqliteTaskStore } from "../../src/store/sqlite/sqlite-task-store.js";
import type { TaskStore } from "../../src/store/task-store.js";
import { runCli } from "../helpers/cli.js";
import {
  createMigratedSchema,
  dropSchema,
  migratedSchema,
  postgresSkip,
  TEST_DATABASE_URL,
  uniqueSchema,
} from "../helpers/postgres.js";
import { openTestProject, serviceOn, TestClock, type TestProject } from "../helpers/service.js";
import { tempDir } from "../helpers/temp.js";

/** Creates a task and returns its id. */
export async function task(
  project: Pick<TestProject, "ok">,
  title: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  return (await project.ok("arbeit_task_create", { title, ...extra })).task.id;
}

/**
 * Everything a write could leave behind, read through the store's own connection: every row of
 * every table, plus the newest event seq and each task's version spelled out so a failure names
 * them. "Writes nothing" is checked against this, so a second run that rewrites a row in place
 * (a version bump, a lease pushed forward, a cursor moved, a value put back) shows as plainly as
 * one that adds a row.
 */
export interface Footprint {
  seq: number;
  versions: Record<string, number>;
  rows: Record<string, string[]>;
}

/** The tables of the store's database (on Postgres, of its schema), by name. */
const TABLES = {
  sqlite: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
  postgres:
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name",
} as const;

export function footprint(project: { store: SqlStore }): Promise<Footprint> {
  return project.store.transaction("read", async (db) => {
    const tables = await db.all(TABLES[db.dialect.name]);
    const rows: Record<string, string[]> = {};
    for (const { name } of tables)
      rows[String(name)] = (await db.all(`SELECT * FROM ${name}`)).map((row) => JSON.stringify(row)).sort();
    const seq = Number((await db.get("SELECT COALESCE(MAX(seq), 0) AS n FROM events"))!.n);
    const versions = Object.fromEntries(
      (await db.all("SELECT id, version FROM tasks ORDER BY id")).map((task) => [task.id, Number(task.version)]),
    );
    return { seq, versions, rows };
  });
}

export const alice = { agent: "alice", session: "ses-alice" };
export const bob = { agent: "bob", session: "ses-bob" };

/** project.call, read without narrowing: tests inspect `error` and `data` directly. */
export function callAny(
  project: Pick<TestProject, "call">,
  tool: string,
  args: unknown,
  caller?: Record<string, unknown>,
): Promise<any> {
  return project.call(tool, args, caller);
}

/**
 * A project made by `arbeit init` on `engine` (Postgres: a schema of its own), as the CLI and
 * other processes see it through `dir` and `env`, with a library service on the same store for
 * setting up and checking. The enclosing describe's hooks open it and take it down.
 */
export function sharedStore(engine: "sqlite" | "postgres", prefix: string) {
  const { dir, cleanup } = tempDir();
  const schema = engine === "postgres" ? uniqueSchema(prefix) : "";
  const env: Record<string, string> =
    engine === "postgres" ? { ARBEIT_DATABASE_URL: TEST_DATABASE_URL, ARBEIT_DATABASE_SCHEMA: schema } : {};
  let service: ArbeitService | undefined;
  before(async () => {
    if (engine === "postgres") await createMigratedSchema(schema);
    assert.equal((await runCli(["init"], { cwd: dir, env })).code, 0);
    service = await openProject({
      cwd: dir,
      databaseUrl: env.ARBEIT_DATABASE_URL,
      databaseSchema: env.ARBEIT_DATABASE_SCHEMA,
    });
  });
  after(async () => {
    await service?.close();
    if (engine === "postgres") await dropSchema(schema);
    cleanup();
  });
  return {
    dir,
    env,
    get service(): ArbeitService {
      assert.ok(service, "the store is open only inside the describe's tests");
      return service;
    },
  };
}

export const ENGINES = ["sqlite", "postgres"] as const;
export type Engine = (typeof ENGINES)[number];

/** The describe options for a suite on `engine`: on Postgres, skipped (saying why) when it is unreachable, never under CI. */
export async function onEngine(engine: Engine): Promise<{ skip?: string | false }> {
  return engine === "postgres" ? { skip: await postgresSkip() } : {};
}

/**
 * A project on `engine` opened through the real service, as openTestProject opens one on SQLite:
 * the same test clock drives the service and the store (leases), and on Postgres the store gets
 * a schema of its own, dropped on close.
 */
export interface EngineProject extends Omit<TestProject, "store" | "dbPath"> {
  engine: Engine;
  store: TaskStore & SqlStore;
  /** Rows of a query run through the store's own connection (`?` placeholders on both engines). */
  rows(sql: string, ...params: SqlValue[]): Promise<Record<string, unknown>[]>;
  /** A second store on the same database, as a restarted process would open it. */
  reopen(): Promise<TaskStore & SqlStore>;
}

export async function openEngineProject(engine: Engine, options: { clock?: TestClock } = {}): Promise<EngineProject> {
  if (engine === "sqlite") {
    const project = await openTestProject(options);
    return {
      ...project,
      engine,
      rows: (sql, ...params) => project.store.transaction("read", (db) => db.all(sql, ...params)),
      reopen: () => SqliteTaskStore.open(project.dbPath, { clock: project.clock.now }),
    };
  }
  const { dir, cleanup } = tempDir();
  const schema = await migratedSchema("arbeit_ma");
  const clock = options.clock ?? new TestClock();
  const open = () => PostgresTaskStore.open(TEST_DATABASE_URL, { schema, clock: clock.now });
  const store = await open();
  return {
    ...serviceOn(store, dir, clock),
    engine,
    rows: (sql, ...params) => store.transaction("read", (db) => db.all(sql, ...params)),
    reopen: open,
    async close() {
      await store.close();
      await dropSchema(schema);
      cleanup();
    },
  };
}

/**
 * Moves the task's stored lease end into the past, in the test's own database: the lease has run
 * out for every process on the store, on its own clock too, without waiting for it.
 */
export async function leaseRanOut(service: ArbeitService, taskId: string): Promise<void> {
  const store = service.store as unknown as SqlStore;
  const changed = await store.transaction("write", (db) =>
    db.run(
      "UPDATE tasks SET lease_expires_at = ? WHERE id = ? AND lease_expires_at IS NOT NULL",
      "2000-01-01T00:00:00.000Z",
      taskId,
    ),
  );
  assert.equal(changed, 1, `${taskId} had a lease to run out`);
}
