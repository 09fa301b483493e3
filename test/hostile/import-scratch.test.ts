import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, before, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { CLI } from "../helpers/cli.js";
import { oldExport } from "./dump.js";
import { forEachEngine, type HostileProject } from "./engines.js";

/**
 * An export from an older schema is loaded into a scratch database and migrated there first. That
 * file holds every task, note and memory of the project, so it is private to its owner while it
 * exists, and it does not outlive the import: not when the import ends, not when the process is
 * interrupted (SIGINT, SIGTERM), and a file left by a process killed outright (SIGKILL) is removed
 * by the next import.
 */

/** Where a scratch file of process `pid` may be: beside the store, or in the temp folder. */
function scratchEntries(project: HostileProject, pid: number): string[] {
  const prefix = `arbeit-import-${pid}-`;
  const found: string[] = [];
  for (const dir of [join(project.dir, ".arbeit"), tmpdir()]) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) if (name.startsWith(prefix)) found.push(join(dir, name));
  }
  return found;
}

interface RunningImport {
  child: ChildProcessWithoutNullStreams;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }>;
}

/** Imports still running when a test ends (it failed part way): stopped, so the suite can end. */
const unfinished = new Set<ChildProcessWithoutNullStreams>();

/** `arbeit import -` in its own process, its standard input left open for the test to feed. */
function startImport(project: HostileProject): RunningImport {
  const env: Record<string, string | undefined> = { ...process.env, ...project.env };
  for (const key of ["ARBEIT_DB", "ARBEIT_DATABASE_URL", "ARBEIT_DATABASE_SCHEMA"])
    if (!project.env[key]) delete env[key];
  const child = spawn(process.execPath, [CLI, "import", "-"], { cwd: project.dir, env, stdio: "pipe" });
  let stdout = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.resume();
  unfinished.add(child);
  child.on("exit", () => unfinished.delete(child));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal, stdout })),
  );
  return { child, exited };
}

/** Feeds the header and a few rows, then waits until the scratch database exists; returns it. */
async function untilScratch(project: HostileProject, running: RunningImport, lines: string[]): Promise<string[]> {
  running.child.stdin.write(`${lines.slice(0, 3).join("\n")}\n`);
  let gone = false;
  void running.exited.then(() => (gone = true));
  for (;;) {
    const found = scratchEntries(project, running.child.pid!);
    if (found.length > 0) return found;
    assert.equal(gone, false, "the import ended before its scratch database appeared");
    await sleep(20);
  }
}

/** Every file under `path` (itself when it is a file), with its mode. */
function filesUnder(path: string): Array<{ path: string; mode: number; dir: boolean }> {
  const stat = statSync(path);
  if (!stat.isDirectory()) return [{ path, mode: stat.mode & 0o777, dir: false }];
  return [
    { path, mode: stat.mode & 0o777, dir: true },
    ...readdirSync(path).flatMap((name) => filesUnder(join(path, name))),
  ];
}

forEachEngine("the import's scratch database", (project, engine) => {
  let lines: string[];
  before(async () => {
    lines = (await oldExport(3)).trimEnd().split("\n");
  });
  afterEach(() => {
    for (const child of unfinished) child.kill("SIGKILL");
  });

  it("is private to its owner while the import runs, and gone when it ends", async () => {
    const target = await project();
    const running = startImport(target);
    const found = await untilScratch(target, running, lines);
    for (const entry of found.flatMap(filesUnder)) {
      assert.equal(entry.mode & 0o077, 0, `${entry.path} is open to others (mode ${entry.mode.toString(8)})`);
    }
    if (engine === "sqlite") {
      assert.ok(
        found.every((path) => path.startsWith(join(target.dir, ".arbeit"))),
        `the scratch database sits beside the store: ${found.join(", ")}`,
      );
    }
    running.child.stdin.end(`${lines.slice(3).join("\n")}\n`);
    const { code, stdout } = await running.exited;
    assert.equal(code, 0, stdout);
    assert.equal(JSON.parse(stdout).data.export_schema_version, 3);
    assert.deepEqual(scratchEntries(target, running.child.pid!), []);
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`is removed when the import is stopped with ${signal}`, async () => {
      const target = await project();
      const running = startImport(target);
      await untilScratch(target, running, lines);
      running.child.kill(signal);
      const exit = await running.exited;
      assert.ok(exit.signal === signal || exit.code !== 0, `the import carried on after ${signal}`);
      assert.deepEqual(scratchEntries(target, running.child.pid!), []);
      const tasks = await target.ok("arbeit_query", { query: "tasks" });
      assert.equal(tasks.tasks.length, 0, "an interrupted import imports nothing");
    });
  }

  it("left behind by a process killed outright, is removed by the next import", async () => {
    const target = await project();
    const killed = startImport(target);
    const left = await untilScratch(target, killed, lines);
    killed.child.kill("SIGKILL");
    await killed.exited;
    assert.ok(
      left.every((path) => existsSync(path)),
      "SIGKILL gives a process no chance to tidy up",
    );
    const next = startImport(target);
    next.child.stdin.end(`${lines.join("\n")}\n`);
    const { code, stdout } = await next.exited;
    assert.equal(code, 0, stdout);
    assert.deepEqual(scratchEntries(target, killed.child.pid!), [], "the stale scratch database is still there");
  });
});
