import assert from "node:assert/strict";
import { after, before } from "node:test";
import type { ArbeitService } from "../../src/service/arbeit-service.js";
import { openProject } from "../../src/service/project.js";
import { runCli } from "../helpers/cli.js";
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from "../helpers/postgres.js";
import type { TestProject } from "../helpers/service.js";
import { tempDir } from "../helpers/temp.js";

/** Creates a task and returns its id. */
export async function task(project: TestProject, title: string, extra: Record<string, unknown> = {}): Promise<string> {
  return (await project.ok("arbeit_task_create", { title, ...extra })).task.id;
}

/**
 * Everything a write could leave behind, read straight from the database file: every row of
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

export function footprint(project: TestProject): Footprint {
  const driver = project.store.driver;
  const tables = driver
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .all<{ name: string }>();
  const rows: Record<string, string[]> = {};
  for (const { name } of tables)
    rows[name] = driver
      .prepare(`SELECT * FROM ${name}`)
      .all<Record<string, unknown>>()
      .map((row) => JSON.stringify(row))
      .sort();
  const seq = Number(driver.prepare("SELECT COALESCE(MAX(seq), 0) AS n FROM events").get<{ n: number }>()!.n);
  const versions = Object.fromEntries(
    driver
      .prepare("SELECT id, version FROM tasks ORDER BY id")
      .all<{ id: string; version: number }>()
      .map((task) => [task.id, Number(task.version)]),
  );
  return { seq, versions, rows };
}

export const alice = { agent: "alice", session: "ses-alice" };
export const bob = { agent: "bob", session: "ses-bob" };

/** project.call, read without narrowing: tests inspect `error` and `data` directly. */
export function callAny(
  project: TestProject,
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
