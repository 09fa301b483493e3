import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

describe("maintenance commands with a Postgres store", () => {
  const { dir, cleanup } = tempDir();
  after(cleanup);
  // The URL is never contacted: the commands refuse before opening anything.
  const env = { ARBEIT_DATABASE_URL: "postgres://127.0.0.1:1/none" };

  for (const args of [["doctor"], ["backup", "copy.db"], ["export"], ["import", "-"]]) {
    it(`arbeit ${args[0]} refuses instead of working on an empty local file`, async () => {
      const result = await runCli(args, { cwd: dir, env, input: "" });
      assert.notEqual(result.code, 0);
      assert.match(result.stdout + result.stderr, /SQLite stores; this project uses Postgres/);
      assert.match(result.stdout + result.stderr, /pg_dump/);
    });
  }
});
