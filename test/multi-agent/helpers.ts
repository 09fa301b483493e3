import type { TestProject } from "../helpers/service.js";

/** Creates a task and returns its id. */
export async function task(project: TestProject, title: string, extra: Record<string, unknown> = {}): Promise<string> {
  return (await project.ok("arbeit_task_create", { title, ...extra })).task.id;
}

/** Row counts of every table plus the newest event seq: what "writes nothing" is checked against. */
export function footprint(project: TestProject): Record<string, number> {
  const driver = project.store.driver;
  const tables = driver
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .all<{ name: string }>();
  const counts: Record<string, number> = {};
  for (const { name } of tables)
    counts[name] = Number(driver.prepare(`SELECT COUNT(*) AS n FROM ${name}`).get<{ n: number }>()!.n);
  return counts;
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
