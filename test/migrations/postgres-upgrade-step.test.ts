import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { ArbeitService } from "../../src/service/arbeit-service.js";
import { listPostgresMigrations, migrationKind } from "../../src/store/postgres/migrate.js";
import { PostgresTaskStore } from "../../src/store/postgres/postgres-task-store.js";
import { runCli } from "../helpers/cli.js";
import { adminQuery, dropSchema, postgresSkip, TEST_DATABASE_URL, uniqueSchema } from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp.js";
import { startService } from "../serve/harness.js";
import type { UiProject } from "../ui/harness.js";
import {
  LATER_EXPAND,
  laterContract,
  laterRelease,
  migrateWith,
  postgresCheckout,
  versionsOf,
} from "./postgres-support.js";

/**
 * A shared store is upgraded by one deliberate step: `arbeit migrate`, or `arbeit serve` at start.
 * A CLI, hook or maintenance call of this release on a schema that is behind is SCHEMA_TOO_OLD and
 * changes nothing; on a schema a later release grew by expands it works; on one a later release
 * contracted past it, SCHEMA_TOO_NEW names the release it needs.
 */
const skip = await postgresSkip();
const LATEST = listPostgresMigrations().length;

describe("upgrading a shared Postgres store", { skip, timeout: 240_000 }, () => {
  const schemas: string[] = [];
  const cleanups: Array<() => void> = [];
  after(async () => {
    for (const schema of schemas) await dropSchema(schema);
    for (const cleanup of cleanups) cleanup();
  });
  const project = (schema: string) => {
    const { dir, cleanup } = tempDir("arbeit-upgrade-");
    cleanups.push(cleanup);
    return { dir, env: postgresCheckout(dir, schema) };
  };
  /** A schema one version behind this code, holding one task written at that version. */
  const behind = async () => {
    const schema = uniqueSchema("arbeit_behind");
    schemas.push(schema);
    await migrateWith(schema, listPostgresMigrations().slice(0, LATEST - 1));
    await adminQuery(
      `INSERT INTO "${schema}".tasks (id, list_id, title, status, priority, version, created_at, updated_at)
       VALUES ('tkt-older001', 'default', 'written before the upgrade', 'open', 2, 1, '2026-11-29T10:00:00.000Z', '2026-11-29T10:00:00.000Z')`,
    );
    return schema;
  };
  const taskCount = async (schema: string) =>
    Number((await adminQuery(`SELECT COUNT(*) AS n FROM "${schema}".tasks`)).rows[0].n);

  it("a teammate's call on a schema that is behind is SCHEMA_TOO_OLD, and the schema is left as it was", async () => {
    const schema = await behind();
    const { dir, env } = project(schema);
    for (const args of [
      ["task", "create", "must not land"],
      ["call", "arbeit_query", '{"query": "ready"}'],
      ["export", "-"],
      ["doctor"],
    ]) {
      const result = await runCli([...args, "--json"], { cwd: dir, env });
      assert.equal(result.code, 1, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
      assert.equal(result.json?.error?.code, "SCHEMA_TOO_OLD", `${args.join(" ")}: ${result.stdout}`);
      assert.match(
        result.json.error.message,
        new RegExp(`version ${LATEST - 1}, and this Arbeit needs version ${LATEST}`),
      );
      assert.match(result.json.error.suggestions.join(" "), /arbeit migrate/);
      assert.deepEqual(result.json.error.details, {
        database_version: LATEST - 1,
        required_version: LATEST,
        schema,
        cause: "schema_behind",
      });
    }
    // Joining the store from another checkout is refused too, and marks nothing there.
    const other = tempDir("arbeit-upgrade-");
    cleanups.push(other.cleanup);
    const init = await runCli(["init", "--json"], { cwd: other.dir, env });
    assert.equal(init.json?.error?.code, "SCHEMA_TOO_OLD", init.stdout);
    assert.equal(existsSync(join(other.dir, ".arbeit")), false);
    assert.deepEqual(await versionsOf(schema), { legacy: LATEST - 1, changes: [] });
    assert.equal(await taskCount(schema), 1);
  });

  it("arbeit migrate --dry-run says what it would apply; arbeit migrate applies it, once", async () => {
    const schema = await behind();
    const { dir, env } = project(schema);
    const dry = await runCli(["migrate", "--dry-run", "--json"], { cwd: dir, env });
    assert.equal(dry.code, 0, dry.stdout + dry.stderr);
    const last = listPostgresMigrations().at(-1)!;
    assert.deepEqual(
      {
        from: dry.json.data.from,
        to: dry.json.data.to,
        applied: dry.json.data.applied,
        pending: dry.json.data.pending,
      },
      {
        from: LATEST - 1,
        to: LATEST - 1,
        applied: [],
        pending: [{ version: LATEST, name: last.name, kind: migrationKind(last).kind }],
      },
    );
    assert.deepEqual(await versionsOf(schema), { legacy: LATEST - 1, changes: [] });

    const migrated = await runCli(["migrate", "--json"], { cwd: dir, env });
    assert.equal(migrated.code, 0, migrated.stdout + migrated.stderr);
    assert.equal(migrated.json.data.from, LATEST - 1);
    assert.equal(migrated.json.data.to, LATEST);
    assert.deepEqual(
      migrated.json.data.applied.map((m: { version: number }) => m.version),
      [LATEST],
    );
    const created = await runCli(["task", "create", "after the upgrade", "--json"], { cwd: dir, env });
    assert.equal(created.code, 0, created.stdout);
    assert.equal(await taskCount(schema), 2);

    const again = await runCli(["migrate", "--json"], { cwd: dir, env });
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.deepEqual([again.json.data.from, again.json.data.to, again.json.data.applied], [LATEST, LATEST, []]);
  });

  it("arbeit serve migrates at start and says so; with --no-migrate it refuses to start and changes nothing", async () => {
    const schema = await behind();
    const { dir, env } = project(schema);
    const checkout = { dir, env } as unknown as UiProject;
    const refused = await runCli(["serve", "--port", "0", "--no-migrate", "--json"], { cwd: dir, env });
    assert.equal(refused.code, 1, refused.stdout + refused.stderr);
    assert.equal(refused.json?.error?.code, "SCHEMA_TOO_OLD", refused.stdout);
    assert.deepEqual(await versionsOf(schema), { legacy: LATEST - 1, changes: [] });

    const service = await startService(checkout);
    try {
      assert.match(
        service.stderr(),
        new RegExp(`Migrated the store .*${schema}.* from schema version ${LATEST - 1} to ${LATEST}`),
      );
      assert.equal((await versionsOf(schema)).legacy, LATEST);
      const health = await fetch(`${service.url}/healthz`);
      assert.equal(health.status, 200);
    } finally {
      assert.equal(await service.stop(), 0);
    }
  });

  it("a store a later release grew by an expand keeps working for this one; a contract past it is SCHEMA_TOO_NEW naming what it needs", async () => {
    const schema = uniqueSchema("arbeit_later");
    schemas.push(schema);
    const { dir, env } = project(schema);
    const files = tempDir("arbeit-later-migrations-");
    cleanups.push(files.cleanup);
    const expanded = laterRelease(files.dir, [LATER_EXPAND]);
    await migrateWith(schema, expanded);
    assert.deepEqual(await versionsOf(schema), { legacy: Math.min(LATEST, 14), changes: range(15, LATEST + 1) });

    const created = await runCli(["task", "create", "on a newer schema", "--json"], { cwd: dir, env });
    assert.equal(created.code, 0, created.stdout + created.stderr);
    const ready = await runCli(["call", "arbeit_query", '{"query": "ready"}', "--json"], { cwd: dir, env });
    assert.equal(ready.json?.data?.tasks?.[0]?.title, "on a newer schema", ready.stdout);
    // Nothing to do for this release, and never a step back.
    const step = await runCli(["migrate", "--json"], { cwd: dir, env });
    assert.deepEqual(
      [step.json?.data?.from, step.json?.data?.to, step.json?.data?.applied],
      [LATEST + 1, LATEST + 1, []],
    );

    const contracted = laterRelease(files.dir, [LATER_EXPAND, laterContract(LATEST + 1)]);
    await migrateWith(schema, contracted);
    for (const args of [
      ["task", "create", "must not land"],
      ["call", "arbeit_query", '{"query": "ready"}'],
      ["migrate"],
    ]) {
      const refused = await runCli([...args, "--json"], { cwd: dir, env });
      assert.equal(refused.json?.error?.code, "SCHEMA_TOO_NEW", `${args.join(" ")}: ${refused.stdout}`);
      assert.match(
        refused.json.error.message,
        new RegExp(
          `at version ${LATEST + 2} and was migrated past this Arbeit: it works with Arbeit that knows schema version ${LATEST + 1} or later, and this one knows up to ${LATEST}`,
        ),
      );
    }
    assert.equal(await taskCount(schema), 1);
  });

  it("a long-running process keeps working when an expand adds a column to a table it reads whole", async () => {
    const schema = uniqueSchema("arbeit_running");
    schemas.push(schema);
    const store = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema, maxConnections: 2 });
    try {
      const service = new ArbeitService(store, { projectRoot: process.cwd() });
      const caller = { agent: "runner", session: "ses-running" };
      const { data } = await service.createTask({ title: "held open across the upgrade" }, caller);
      const read = async () => {
        const got = await service.getTask({ task_id: data.task.id, include: ["context"] });
        return (got.data as { context: Array<{ content: string }> }).context.map((entry) => entry.content);
      };
      await service.addContext({ task_id: data.task.id, type: "note", content: "before" }, caller);
      // Both pooled connections have prepared the read of context_entries (SELECT *).
      await Promise.all([read(), read(), read()]);
      const files = tempDir("arbeit-later-migrations-");
      cleanups.push(files.cleanup);
      await migrateWith(
        schema,
        laterRelease(files.dir, [
          {
            name: "wider_context",
            sql: "-- expand: a nullable column\nALTER TABLE context_entries ADD COLUMN later_note TEXT;\n",
          },
        ]),
      );
      await service.addContext({ task_id: data.task.id, type: "note", content: "after" }, caller);
      for (let i = 0; i < 4; i++) assert.deepEqual(await read(), ["before", "after"]);
      assert.ok((store.retries["0A000"] ?? 0) >= 1, JSON.stringify(store.retries));
    } finally {
      await store.close();
    }
  });

  it("an older release's import cannot empty the change log, which it would take for data", async () => {
    const schema = uniqueSchema("arbeit_log");
    schemas.push(schema);
    const files = tempDir("arbeit-later-migrations-");
    cleanups.push(files.cleanup);
    await migrateWith(schema, laterRelease(files.dir, [LATER_EXPAND]));
    await assert.rejects(
      adminQuery(`DELETE FROM "${schema}".schema_changes`),
      /schema_changes is Arbeit's record of its migrations, not data/,
    );
    await assert.rejects(adminQuery(`TRUNCATE "${schema}".schema_changes`), /not data/);
  });
});

function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
}
