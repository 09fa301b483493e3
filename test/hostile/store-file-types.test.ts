import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

/**
 * Where the database belongs there may be something that is no file: a named pipe (opening one
 * waits for a writer forever), a socket, a directory. Every command says so at once with a
 * structured error; every hook stays out of the host's way (exit 0, nothing on stdout or stderr).
 * The `timeout` of each test only turns a hang into a failure; it claims nothing about speed.
 */

const { dir: root, cleanup } = tempDir();
const servers: Server[] = [];
after(() => {
  for (const server of servers) server.close();
  cleanup();
});

let counter = 0;
function place(kind: "fifo" | "directory" | "socket"): Promise<{ dir: string; path: string }> {
  const dir = join(root, `p${++counter}`);
  mkdirSync(dir);
  const path = join(dir, "store.db");
  if (kind === "fifo") execFileSync("mkfifo", [path]);
  if (kind === "directory") mkdirSync(path);
  if (kind === "socket") {
    const server = createServer();
    servers.push(server);
    return new Promise((resolve) => server.listen(path, () => resolve({ dir, path })));
  }
  return Promise.resolve({ dir, path });
}

const KINDS = { fifo: /named pipe \(FIFO\)/, directory: /a directory/, socket: /a socket/ } as const;

describe("a database path that names something other than a regular file", () => {
  for (const [kind, wording] of Object.entries(KINDS) as Array<[keyof typeof KINDS, RegExp]>) {
    it(`--db and ARBEIT_DB naming ${kind === "fifo" ? "a FIFO" : `a ${kind}`}: STORE_UNAVAILABLE at once, for tools and init`, {
      timeout: 60_000,
    }, async () => {
      const { dir, path } = await place(kind);
      const ways: Array<{ args: string[]; env: Record<string, string> }> = [
        { args: ["--db", path], env: {} },
        { args: [], env: { ARBEIT_DB: path } },
      ];
      for (const { args, env } of ways) {
        const call = await runCli([...args, "call", "arbeit_query", '{"query":"ready"}'], { cwd: dir, env });
        assert.equal(call.code, 1, call.stdout + call.stderr);
        assert.equal(call.json.error.code, "STORE_UNAVAILABLE");
        assert.match(call.json.error.message, wording);
        assert.equal(call.json.error.details.cause, "not_a_regular_file");
      }
      const init = await runCli(["init", "--db", path], { cwd: dir });
      assert.equal(init.code, 1, init.stdout + init.stderr);
      assert.equal(
        init.json.error.code,
        "STORE_UNAVAILABLE",
        "not ALREADY_INITIALIZED: nothing was ever initialised there",
      );
      assert.match(init.json.error.message, wording);
      assert.deepEqual(readdirSync(dir), ["store.db"], "nothing else is created");
    });
  }

  it("a FIFO as .arbeit/arbeit.db: STORE_UNAVAILABLE for status and tools; hooks exit 0 in silence", {
    timeout: 60_000,
  }, async () => {
    const dir = join(root, "project");
    mkdirSync(join(dir, ".arbeit"), { recursive: true });
    execFileSync("mkfifo", [join(dir, ".arbeit", "arbeit.db")]);
    for (const args of [
      ["status", "--json"],
      ["call", "arbeit_task_create", '{"title":"x"}'],
    ]) {
      const result = await runCli(args, { cwd: dir });
      assert.equal(result.code, 1, result.stdout + result.stderr);
      assert.equal(result.json.error?.code, "STORE_UNAVAILABLE", result.stdout);
    }
    const payload = JSON.stringify({ session_id: "s-1", cwd: dir, hook_event_name: "SessionStart", source: "startup" });
    for (const hook of ["session-start", "user-prompt-submit", "post-tool-use"]) {
      const result = await runCli(["hook", hook], { cwd: dir, input: payload });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, "", `${hook} must not tell the agent anything`);
      assert.equal(result.stderr, "", `${hook} stays silent, as outside a project`);
    }
    assert.ok(!existsSync(join(dir, ".arbeit", "arbeit.db-wal")), "the driver never opened it");
  });

  for (const kind of ["file", "fifo"] as const) {
    it(`a ${kind === "fifo" ? "FIFO" : "regular file"} named .arbeit: init says so (STORE_UNAVAILABLE), not INTERNAL_ERROR`, {
      timeout: 60_000,
    }, async () => {
      const dir = join(root, `dot-arbeit-${kind}`);
      mkdirSync(dir);
      if (kind === "fifo") execFileSync("mkfifo", [join(dir, ".arbeit")]);
      else writeFileSync(join(dir, ".arbeit"), "notes\n");
      const init = await runCli(["init"], { cwd: dir });
      assert.equal(init.code, 1, init.stdout + init.stderr);
      assert.equal(init.json.error.code, "STORE_UNAVAILABLE");
      assert.equal(init.json.error.details.cause, "not_a_directory");
      assert.doesNotMatch(JSON.stringify(init.json.error.suggestions), /delete|remove|--force/i);
      assert.deepEqual(readdirSync(dir), [".arbeit"]);
    });
  }
});
