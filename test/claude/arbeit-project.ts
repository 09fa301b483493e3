import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Task } from "../../src/domain/types.js";
import type { ArbeitService } from "../../src/service/arbeit-service.js";
import { openProject } from "../../src/service/project.js";
import { runCli } from "../helpers/cli.js";
import { type ClaudeSandbox, REPO } from "./claude-harness.js";

const execFileAsync = promisify(execFile);

/** A sandbox project with Arbeit set up for Claude Code, and what the tests read it through. */
export interface ArbeitProject {
  /** The built CLI (dist/cli/main.js) in the project; a JSON envelope that must be a success. */
  arbeit(...args: string[]): Promise<any>;
  /** The project's store, opened where the hooks and MCP servers found it (the SQLite file, or Postgres). */
  withStore<T>(read: (service: ArbeitService) => Promise<T>): Promise<T>;
  /** A task with its files and sessions. */
  getTask(id: string): Promise<{ task: Task; files: any[]; sessions: any[] }>;
}

/**
 * `arbeit init` and `arbeit setup claude` in the sandbox's project. With `install` (the default)
 * the project first gets Arbeit as docs/claude-code.md describes (`npm install --save-dev
 * /path/to/arbeit`, offline and hermetic), so setup writes the portable commands that run the
 * project's copy; without it, setup writes this checkout's CLI by absolute path.
 */
export async function setUpArbeitProject(
  sandbox: ClaudeSandbox,
  name: string,
  options: { install?: boolean; env?: Record<string, string> } = {},
): Promise<ArbeitProject> {
  const project = sandbox.project;
  // ARBEIT_DATABASE_URL and ARBEIT_DATABASE_SCHEMA here put the project on Postgres; Claude Code
  // must then run with them too (runClaude's env), as its hooks and MCP server need them.
  const env = options.env ?? {};
  const arbeit = async (...args: string[]) => {
    const result = await runCli(args, { cwd: project, env });
    assert.equal(result.code, 0, `arbeit ${args.join(" ")}: ${result.stderr}${result.stdout}`);
    assert.equal(result.json?.success, true, result.stdout);
    return result.json.data;
  };
  const withStore = async <T>(read: (service: ArbeitService) => Promise<T>): Promise<T> => {
    // The SQLite file the hooks and MCP servers used, whatever the outer ARBEIT_DATABASE_URL says;
    // or the project's Postgres schema.
    const service = await openProject(
      env.ARBEIT_DATABASE_URL
        ? { cwd: project, databaseUrl: env.ARBEIT_DATABASE_URL, databaseSchema: env.ARBEIT_DATABASE_SCHEMA }
        : { cwd: project, db: join(project, ".arbeit", "arbeit.db") },
    );
    try {
      return await read(service);
    } finally {
      await service.close();
    }
  };
  writeFileSync(join(project, "package.json"), `${JSON.stringify({ name, private: true })}\n`);
  if (options.install ?? true) {
    await execFileAsync(
      "npm",
      ["install", "--save-dev", REPO, "--offline", "--no-audit", "--no-fund", "--ignore-scripts"],
      {
        cwd: project,
        timeout: 60_000,
        env: {
          PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
          HOME: sandbox.home,
          npm_config_cache: join(sandbox.home, ".npm"),
          npm_config_update_notifier: "false",
        },
      },
    );
  }
  await arbeit("init");
  await arbeit("setup", "claude", "--json");
  return {
    arbeit,
    withStore,
    getTask: (id) =>
      withStore(
        async (service) => (await service.getTask({ task_id: id, include: ["files", "sessions"] })).data as any,
      ),
  };
}
