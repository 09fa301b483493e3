import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { listMigrations } from "../../src/store/sqlite/migrate.js";
import { openDriver } from "../../src/store/sqlite/open-driver.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

/**
 * A database written by a newer Arbeit is refused loudly with SCHEMA_TOO_NEW by every command,
 * and is left exactly as it was: no downgrade, no partial migration, no write.
 */
const LATEST = listMigrations().length;
let dir: string;
let cleanup: () => void;
let dbPath: string;
const digest = () => createHash("sha256").update(readFileSync(dbPath)).digest("hex");

before(async () => {
  ({ dir, cleanup } = tempDir());
  assert.equal((await runCli(["init"], { cwd: dir })).code, 0);
  assert.equal((await runCli(["task", "create", "written by today's Arbeit"], { cwd: dir })).code, 0);
  dbPath = join(dir, ".arbeit", "arbeit.db");
  const driver = await openDriver(dbPath);
  driver.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  driver.exec(`PRAGMA user_version = ${LATEST + 1}`);
  driver.close();
});
after(() => cleanup());

describe(`a database at schema v${LATEST + 1} (newer than this code)`, () => {
  const COMMANDS: string[][] = [
    ["call", "arbeit_query", '{"query": "ready"}'],
    ["call", "arbeit_task_create", '{"title": "must not land"}'],
    ["task", "create", "must not land either", "--json"],
    ["doctor", "--json"],
    ["export", "--json"],
    ["backup", "copy.db", "--json"],
  ];
  for (const args of COMMANDS) {
    it(`arbeit ${args.slice(0, 2).join(" ")}: exit 1, SCHEMA_TOO_NEW naming both versions, file untouched`, async () => {
      const before = digest();
      const result = await runCli(args, { cwd: dir });
      assert.equal(result.code, 1, result.stdout + result.stderr);
      assert.equal(result.json?.success, false, result.stdout);
      assert.equal(result.json.error.code, "SCHEMA_TOO_NEW");
      assert.match(result.json.error.message, new RegExp(`version ${LATEST + 1}.*${LATEST}`));
      assert.equal(digest(), before);
    });
  }

  it("still says it is at the newer version afterwards", async () => {
    const driver = await openDriver(dbPath);
    assert.equal(driver.prepare("PRAGMA user_version").get<{ user_version: number }>()!.user_version, LATEST + 1);
    driver.close();
  });
});
