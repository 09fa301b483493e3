import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { ArbeitError } from "../../src/domain/errors.js";
import { assignedToSql } from "../../src/store/sql/claims.js";
import { sqliteDialect } from "../../src/store/sql/dialect.js";
import { listMigrations, schemaVersion } from "../../src/store/sqlite/migrate.js";
import { openDriver } from "../../src/store/sqlite/open-driver.js";
import { SqliteTaskStore } from "../../src/store/sqlite/sqlite-task-store.js";
import { tempDir } from "../helpers/temp.js";

const runtime = typeof (globalThis as { Bun?: unknown }).Bun === "undefined" ? "node" : "bun";

describe(`SQLite store under ${runtime}`, () => {
  it("uses the driver of the runtime it runs in", async () => {
    const store = await SqliteTaskStore.open(":memory:");
    assert.equal(store.driver.runtime, runtime);
    await store.close();
  });

  it("opens files in WAL mode with a busy timeout, NORMAL sync and foreign keys on", async () => {
    const { dir, cleanup } = tempDir();
    const store = await SqliteTaskStore.open(join(dir, "a.db"));
    const pragma = (name: string) => Object.values(store.driver.prepare(`PRAGMA ${name}`).get() as object)[0];
    assert.equal(pragma("journal_mode"), "wal");
    assert.ok(Number(pragma("busy_timeout")) >= 5000);
    assert.equal(Number(pragma("synchronous")), 1);
    assert.equal(Number(pragma("foreign_keys")), 1);
    await store.close();
    cleanup();
  });

  it("migrates a new database to the newest schema version", async () => {
    const { dir, cleanup } = tempDir();
    const store = await SqliteTaskStore.open(join(dir, "a.db"));
    assert.equal(schemaVersion(store.driver), listMigrations().length);
    await store.close();
    cleanup();
  });

  it("refuses a database newer than the code with SCHEMA_TOO_NEW", async () => {
    const { dir, cleanup } = tempDir();
    const path = join(dir, "future.db");
    const driver = await openDriver(path);
    driver.exec(`PRAGMA user_version = ${listMigrations().length + 1}`);
    driver.close();
    await assert.rejects(
      SqliteTaskStore.open(path),
      (error: unknown) => error instanceof ArbeitError && error.code === "SCHEMA_TOO_NEW",
    );
    cleanup();
  });

  it("rolls back a failed write transaction completely", async () => {
    const store = await SqliteTaskStore.open(":memory:");
    const now = new Date().toISOString();
    await assert.rejects(
      store.write(async (tx) => {
        await tx.insertTask({
          list_id: "default",
          title: "doomed",
          type: null,
          status: "open",
          intent: null,
          description: null,
          plan: null,
          priority: 2,
          risk: null,
          impact: null,
          owner: null,
          active_form: null,
          metadata: null,
          created_at: now,
        });
        throw new Error("boom");
      }),
      /boom/,
    );
    const tasks = await store.read((tx) => tx.listTasks({ limit: 10, offset: 0 }));
    assert.deepEqual(tasks, []);
    await store.close();
  });

  it("reads an agent's unheld assignments by searching the owner index for no lease and a lapsed one", async () => {
    const store = await SqliteTaskStore.open(":memory:");
    const now = new Date().toISOString();
    const plan = (
      store.driver.prepare(`EXPLAIN QUERY PLAN ${assignedToSql(sqliteDialect)}`).all("a", "a", now, 5) as Array<{
        detail: string;
      }>
    ).map((row) => row.detail);
    // Both ends of the unheld ranges are search terms: an agent's held tasks are never read.
    assert.ok(
      plan.includes("SEARCH tasks USING INDEX idx_tasks_owner (owner=? AND lease_expires_at=?)"),
      plan.join("\n"),
    );
    assert.ok(
      plan.includes("SEARCH tasks USING INDEX idx_tasks_owner (owner=? AND lease_expires_at<?)"),
      plan.join("\n"),
    );
    assert.ok(!plan.some((line) => /^SCAN (t|tasks)\b/.test(line)), plan.join("\n"));
    await store.close();
  });
});
