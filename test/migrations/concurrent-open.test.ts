import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { applyMigrations, listMigrations, schemaVersion } from "../../src/store/sqlite/migrate.js";
import { openDriver } from "../../src/store/sqlite/open-driver.js";
import { tempDir } from "../helpers/temp.js";
import { schemaOf } from "./support.js";

/**
 * Several processes opening the same fresh database at the same instant migrate it exactly once:
 * had two of them run a migration, the second would fail on `CREATE TABLE` of an existing table.
 */
const STORE = fileURLToPath(new URL("../../dist/store/sqlite/sqlite-task-store.js", import.meta.url));
const OPENER = `
const { SqliteTaskStore } = await import(process.argv[1]);
const start = Number(process.argv[3]);
while (Date.now() < start) await new Promise((r) => setTimeout(r, 1));
const store = await SqliteTaskStore.open(process.argv[2]);
await store.close();
process.stdout.write("opened");
`;

function opener(path: string, start: number): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", OPENER, STORE, path, String(start)]);
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.stderr.on("data", (chunk) => (out += chunk));
    child.on("close", (code) => resolve({ code: code ?? 1, out }));
  });
}

describe("two or more processes opening a fresh database at once", () => {
  it("migrate it exactly once (6 processes, 3 rounds)", async () => {
    const { dir, cleanup } = tempDir();
    const reference = await openDriver(join(dir, "reference.db"));
    applyMigrations(reference);
    const expected = schemaOf(reference);
    reference.close();
    for (let round = 0; round < 3; round++) {
      const path = join(dir, `fresh-${round}.db`);
      const start = Date.now() + 400;
      const results = await Promise.all(Array.from({ length: 6 }, () => opener(path, start)));
      for (const result of results) assert.equal(result.code, 0, result.out);
      const driver = await openDriver(path);
      assert.equal(schemaVersion(driver), listMigrations().length);
      assert.deepEqual(schemaOf(driver), expected);
      driver.close();
    }
    cleanup();
  });
});
