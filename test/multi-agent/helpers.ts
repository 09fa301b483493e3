import type { TestProject } from "../helpers/service.js";

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
