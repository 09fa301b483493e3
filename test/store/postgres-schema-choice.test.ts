import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { adminQuery, dropSchema, postgresSkip, TEST_DATABASE_URL, uniqueSchema } from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp.js";

/**
 * ARBEIT_DATABASE_SCHEMA names where Arbeit's tables go. Postgres's own schemas and a schema that
 * already holds another application's tables are refused: nothing is created there, and the
 * checkout is not marked as initialised.
 */

const skip = await postgresSkip();

async function tablesIn(schema: string): Promise<string[]> {
  const result = await adminQuery(
    "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY 1",
    [schema],
  );
  return result.rows.map((row) => row.relname as string);
}

describe("the Postgres schema Arbeit's tables go into", { skip }, () => {
  const schemas: string[] = [];
  const dirs: Array<() => void> = [];
  after(async () => {
    for (const name of schemas) await dropSchema(name);
    for (const cleanup of dirs) cleanup();
  });
  async function init(schema: string) {
    const { dir, cleanup } = tempDir();
    dirs.push(cleanup);
    const result = await runCli(["init"], {
      cwd: dir,
      env: { ARBEIT_DATABASE_URL: TEST_DATABASE_URL, ARBEIT_DATABASE_SCHEMA: schema },
    });
    return { dir, result };
  }

  for (const system of ["information_schema", "pg_catalog", "pg_toast", "pg_arbeit"]) {
    it(`refuses the system schema ${system}; nothing is created`, async () => {
      const before = await tablesIn(system);
      const { dir, result } = await init(system);
      assert.equal(result.code, 1, result.stdout);
      assert.equal(result.json.error.code, "INVALID_ARGUMENT");
      assert.match(result.json.error.message, /system schemas/);
      assert.deepEqual(await tablesIn(system), before);
      assert.ok(!existsSync(join(dir, ".arbeit")));
    });
  }

  it("refuses a schema holding another application's tables; they stay as they were, nothing is added", async () => {
    const schema = uniqueSchema("other_app");
    schemas.push(schema);
    await adminQuery(`CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".users (id int)`);
    const { dir, result } = await init(schema);
    assert.equal(result.code, 1, result.stdout);
    assert.equal(result.json.error.code, "INVALID_ARGUMENT");
    assert.match(result.json.error.message, /already holds tables that are not Arbeit's \(users\)/);
    assert.deepEqual(await tablesIn(schema), ["users"]);
    assert.ok(!existsSync(join(dir, ".arbeit")));
  });

  it("refuses a schema whose schema_migrations table is another tool's (a Rails app's)", async () => {
    const schema = uniqueSchema("rails_app");
    schemas.push(schema);
    await adminQuery(
      `CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".schema_migrations (version varchar PRIMARY KEY); INSERT INTO "${schema}".schema_migrations VALUES ('20240101000000')`,
    );
    const { result } = await init(schema);
    assert.equal(result.code, 1, result.stdout);
    assert.equal(result.json.error.code, "INVALID_ARGUMENT");
    assert.match(result.json.error.message, /not Arbeit's \(schema_migrations\)/);
    assert.deepEqual(await tablesIn(schema), ["schema_migrations"]);
  });

  it("accepts an empty schema made beforehand (by a DBA) and a second checkout of an Arbeit schema", async () => {
    const schema = uniqueSchema("arbeit_dba");
    schemas.push(schema);
    await adminQuery(`CREATE SCHEMA "${schema}"`);
    const first = await init(schema);
    assert.equal(first.result.code, 0, first.result.stdout);
    const second = await init(schema);
    assert.equal(second.result.code, 0, second.result.stdout);
    assert.ok((await tablesIn(schema)).includes("tasks"));
  });
});
