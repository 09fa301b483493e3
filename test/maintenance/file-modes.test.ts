import assert from "node:assert/strict";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ARBEIT_SETTINGS, cliCommand, runCli } from "../helpers/cli.js";
import { dropSchema, postgresSkip, TEST_DATABASE_URL, uniqueSchema } from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp.js";

/**
 * The store holds token hashes and webhook signing secrets, and a backup holds the same: both are
 * their owner's alone (0600), also when the umask would let everyone read a new file. Every
 * process here runs under umask 000, the most open a user can set.
 */

const cliUnderOpenUmask = (args: string[], cwd: string, env: Record<string, string> = {}) =>
  runCli(args, { cwd, env, umask: 0 });

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe("file modes of the store and its backup, under umask 000", () => {
  let dir: string;
  let cleanup: () => void;
  before(async () => {
    ({ dir, cleanup } = tempDir());
    const init = await cliUnderOpenUmask(["init"], dir);
    assert.equal(init.code, 0, init.stdout + init.stderr);
  });
  after(() => cleanup());

  it("arbeit init creates .arbeit/arbeit.db readable by its owner only", () => {
    assert.equal(modeOf(join(dir, ".arbeit", "arbeit.db")), "600");
  });

  it("the -wal and -shm files a running arbeit mcp writes are its owner's only too", async () => {
    const client = new Client({ name: "file-modes", version: "1" });
    const env = { ...process.env } as Record<string, string>;
    for (const key of ARBEIT_SETTINGS) delete env[key];
    const transport = new StdioClientTransport({ ...cliCommand(["mcp"], 0), cwd: dir, env });
    await client.connect(transport);
    try {
      const created = await client.callTool({ name: "arbeit_task_create", arguments: { title: "Rotate the keys" } });
      assert.ok(!created.isError, JSON.stringify(created));
      for (const suffix of ["-wal", "-shm"]) {
        const path = join(dir, ".arbeit", `arbeit.db${suffix}`);
        assert.ok(existsSync(path), `${path} exists while the server has the store open`);
        assert.equal(modeOf(path), "600", suffix);
      }
    } finally {
      await client.close();
    }
  });

  it("arbeit backup writes its copy readable by its owner only", async () => {
    const copy = join(dir, "copy.db");
    const result = await cliUnderOpenUmask(["backup", copy], dir);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(modeOf(copy), "600");
  });

  it("a database named with --db that does not exist yet is made readable by its owner only", async () => {
    const result = await cliUnderOpenUmask(["init", "--db", join(dir, "elsewhere.db")], dir);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(modeOf(join(dir, "elsewhere.db")), "600");
  });
});

describe("arbeit backup of a Postgres store, under umask 000", { skip: await postgresSkip() }, () => {
  it("writes its copy readable by its owner only", async () => {
    const { dir, cleanup } = tempDir();
    const schema = uniqueSchema();
    const env = { ARBEIT_DATABASE_URL: TEST_DATABASE_URL, ARBEIT_DATABASE_SCHEMA: schema };
    try {
      assert.equal((await cliUnderOpenUmask(["init"], dir, env)).code, 0);
      assert.equal((await cliUnderOpenUmask(["task", "create", "--title", "Back me up"], dir, env)).code, 0);
      const copy = join(dir, "copy.db");
      const result = await cliUnderOpenUmask(["backup", copy], dir, env);
      assert.equal(result.code, 0, result.stdout + result.stderr);
      assert.equal(modeOf(copy), "600");
    } finally {
      cleanup();
      await dropSchema(schema);
    }
  });
});
