import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { dropSchema, postgresSkip, TEST_DATABASE_URL, uniqueSchema } from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp.js";

/**
 * A checkout initialised on Postgres records that in `.arbeit/config.json`, so that a process
 * started without ARBEIT_DATABASE_URL (a teammate's shell, a CI job, an agent host) refuses
 * instead of quietly working in a new, empty SQLite file.
 */

const skip = await postgresSkip();

/** The test server trusts every connection, so a password in the URL is accepted and ignored. */
const URL_WITH_PASSWORD = (() => {
  const url = new URL(TEST_DATABASE_URL);
  url.password = "s3cret-password";
  return url.href;
})();

describe("a checkout initialised on Postgres", { skip }, () => {
  const schemas: string[] = [];
  const dirs: Array<() => void> = [];
  after(async () => {
    for (const name of schemas) await dropSchema(name);
    for (const cleanup of dirs) cleanup();
  });
  async function checkout(): Promise<{ dir: string; schema: string }> {
    const { dir, cleanup } = tempDir();
    dirs.push(cleanup);
    const schema = uniqueSchema("arbeit_recorded");
    schemas.push(schema);
    const init = await runCli(["init"], {
      cwd: dir,
      env: { ARBEIT_DATABASE_URL: URL_WITH_PASSWORD, ARBEIT_DATABASE_SCHEMA: schema },
    });
    assert.equal(init.code, 0, init.stdout + init.stderr);
    return { dir, schema };
  }

  it("records the store and its schema in .arbeit/config.json, never the URL or its password", async () => {
    const { dir, schema } = await checkout();
    const text = readFileSync(join(dir, ".arbeit", "config.json"), "utf8");
    assert.deepEqual(JSON.parse(text), { store: "postgres", schema });
    assert.doesNotMatch(text, /s3cret|postgres:\/\//);
  });

  it("refuses every command and tool without ARBEIT_DATABASE_URL, naming the variable, and creates no SQLite file", async () => {
    const { dir, schema } = await checkout();
    for (const args of [
      ["call", "arbeit_task_create", '{"title":"lost"}'],
      ["call", "arbeit_query", '{"query":"ready"}'],
      ["status", "--json"],
      ["export"],
    ]) {
      const result = await runCli(args, { cwd: dir });
      assert.equal(result.code, 1, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
      assert.equal(result.json?.error?.code, "STORE_UNAVAILABLE", `${args.join(" ")}: ${result.stdout}`);
      assert.match(result.json.error.message, new RegExp(`Postgres \\(schema ${schema}`));
      assert.match(result.json.error.message, /ARBEIT_DATABASE_URL is not set/);
    }
    const payload = JSON.stringify({ session_id: "s-1", cwd: dir, hook_event_name: "SessionStart", source: "startup" });
    const hook = await runCli(["hook", "session-start"], { cwd: dir, input: payload });
    assert.equal(hook.code, 0, hook.stderr);
    assert.equal(hook.stdout, "", "the hook tells the agent nothing");
    assert.equal(hook.stderr, "", "the hook stays silent, as outside a project");
    assert.deepEqual(readdirSync(join(dir, ".arbeit")).sort(), [".gitignore", "config.json"], "no arbeit.db appeared");
  });

  it("needs only the URL in a teammate's environment: the schema comes from the record", async () => {
    const { dir, schema } = await checkout();
    const made = await runCli(["call", "arbeit_task_create", '{"title":"shared"}'], {
      cwd: dir,
      env: { ARBEIT_DATABASE_URL: TEST_DATABASE_URL, ARBEIT_DATABASE_SCHEMA: schema },
    });
    assert.equal(made.code, 0, made.stdout);
    const listed = await runCli(["call", "arbeit_query", '{"query":"tasks"}'], {
      cwd: dir,
      env: { ARBEIT_DATABASE_URL: TEST_DATABASE_URL },
    });
    assert.equal(listed.code, 0, listed.stdout);
    assert.deepEqual(
      listed.json.data.tasks.map((task: { title: string }) => task.title),
      ["shared"],
    );
    const status = await runCli(["status", "--json"], { cwd: dir, env: { ARBEIT_DATABASE_URL: TEST_DATABASE_URL } });
    assert.equal(status.json.store.engine, "postgres");
    assert.deepEqual(status.json.store.recorded, { store: "postgres", schema });
    assert.match(status.json.store.location, new RegExp(`schema ${schema}`));
  });

  it("refuses ARBEIT_DATABASE_SCHEMA naming another schema than the recorded one", async () => {
    const { dir, schema } = await checkout();
    const other = uniqueSchema("arbeit_recorded_other");
    schemas.push(other);
    const result = await runCli(["call", "arbeit_task_create", '{"title":"elsewhere"}'], {
      cwd: dir,
      env: { ARBEIT_DATABASE_URL: TEST_DATABASE_URL, ARBEIT_DATABASE_SCHEMA: other },
    });
    assert.equal(result.code, 1, result.stdout);
    assert.equal(result.json.error.code, "STORE_UNAVAILABLE");
    assert.match(result.json.error.message, new RegExp(`schema ${schema}.*names ${other}`));
  });
});

describe("a checkout initialised on SQLite", () => {
  it("records nothing and needs no variable, as checkouts made before the record existed", async () => {
    const { dir, cleanup } = tempDir();
    try {
      assert.equal((await runCli(["init"], { cwd: dir })).code, 0);
      assert.ok(!existsSync(join(dir, ".arbeit", "config.json")));
      const made = await runCli(["call", "arbeit_task_create", '{"title":"local"}'], { cwd: dir });
      assert.equal(made.code, 0, made.stdout);
    } finally {
      cleanup();
    }
  });
});
