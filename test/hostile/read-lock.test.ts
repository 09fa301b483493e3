import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { it } from "node:test";
import { fileURLToPath } from "node:url";
import { lockKey } from "../../src/store/postgres/config.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { forEachEngine } from "./engines.js";

/**
 * Reads never take the write lock: a command that only reads runs while another process holds
 * the store's write lock (as an import does for its whole run). The holder keeps the lock until
 * the test lets it go, so a read that waited for it could only fail (its wait budget runs out), never pass.
 */

const PG = fileURLToPath(new URL("../../node_modules/pg/lib/index.js", import.meta.url));
const SQLITE = fileURLToPath(new URL("../../dist/store/sqlite/driver-node.js", import.meta.url));

/** Holds the write lock in a child process until its stdin closes; resolves once it is held. */
function holdWriteLock(engine: string, dir: string, env: Record<string, string>): Promise<ChildProcess> {
  const script =
    engine === "sqlite"
      ? `const { openNodeDriver } = await import(${JSON.stringify(SQLITE)});
         const db = openNodeDriver(${JSON.stringify(join(dir, ".arbeit", "arbeit.db"))});
         db.exec("BEGIN IMMEDIATE");`
      : `const { default: pg } = await import(${JSON.stringify(PG)});
         const client = new pg.Client({ connectionString: ${JSON.stringify(TEST_DATABASE_URL)} });
         await client.connect();
         await client.query("BEGIN");
         await client.query("SELECT pg_advisory_xact_lock($1, $2)", ${JSON.stringify(lockKey(env.ARBEIT_DATABASE_SCHEMA ?? ""))});`;
  const child = spawn(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `${script}
       process.stdout.write("held\\n");
       process.stdin.resume();
       process.stdin.on("end", () => process.exit(0));`,
    ],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`the lock holder exited early (${code})`)));
    child.stdout!.once("data", () => resolve(child));
  });
}

forEachEngine("reads while another process holds the write lock", (project, engine) => {
  it("queries, get, resume --peek and export all answer without waiting for it", async () => {
    const { dir, env, ok, cli } = await project();
    const { task } = await ok("arbeit_task_create", { title: "readable" });
    const holder = await holdWriteLock(engine, dir, env);
    try {
      for (const args of [
        ["query", "tasks", "--json"],
        ["query", "ready", "--json"],
        ["query", "critical_path", "--json"],
        ["task", "get", task.id, "--json"],
        ["resume", "--peek", "--json"],
      ]) {
        const result = await cli(args);
        assert.equal(result.code, 0, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
      }
      const exported = await cli(["export"]);
      assert.equal(exported.code, 0, exported.stderr);
      assert.match(exported.stdout, /readable/);
    } finally {
      holder.removeAllListeners("exit");
      holder.stdin!.end();
    }
  });
});
