import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { runDoctor } from "../../src/maintenance/doctor.js";
import { applyMigrations, listMigrations, schemaVersion } from "../../src/store/sqlite/migrate.js";
import { openDriver } from "../../src/store/sqlite/open-driver.js";
import { SqliteTaskStore } from "../../src/store/sqlite/sqlite-task-store.js";
import { tempDir } from "../helpers/temp.js";
import { catalogueOn, databaseFromFixture, hasFixture, schemaOf, snapshot } from "./support.js";

/**
 * Upgrades: a database at every earlier schema version, built from fixture SQL in the repo
 * (test/fixtures/schema-vN.sql, data as that version of Arbeit wrote it), migrated by the current
 * code, keeps every row exactly, and the newer features work on it.
 */
const LATEST = listMigrations().length;

type Row = Record<string, unknown>;
/**
 * Tables a migration rebuilt under a new key, and where each old row must be found after it.
 * Schema v4 made resume state and idempotency records belong to sessions: what an agent wrote
 * before is the session `agent:<name>`'s, in every other column unchanged.
 */
const REBUILT: Record<string, { since: number; table: string; map: (row: Row) => Row }> = {
  agent_state: {
    since: 4,
    table: "session_state",
    map: ({ agent, cursor_seq, focus_task_id, updated_at }) => ({
      session_id: `agent:${agent}`,
      agent,
      cursor_seq,
      focus_task_id,
      updated_at,
    }),
  },
  idempotency: {
    since: 4,
    table: "idempotency",
    map: ({ agent, request_id, tool, args_hash, response, created_at }) => ({
      session_id: `agent:${agent}`,
      list_id: "",
      request_id,
      tool,
      args_hash,
      response,
      created_at,
    }),
  },
};
const EARLIER = Array.from({ length: LATEST - 1 }, (_, i) => i + 1);

describe("fixtures", () => {
  it("there is a fixture for every earlier schema version", () => {
    const missing = EARLIER.filter((version) => !hasFixture(version));
    assert.deepEqual(missing, [], "add test/fixtures/schema-vN.sql (schema + realistic rows) for each");
  });

  for (const version of EARLIER) {
    it(`schema-v${version}.sql is exactly migrations 1..${version}, and fills every table`, async () => {
      const { dir, cleanup } = tempDir();
      const fromFixture = join(dir, "fixture.db");
      await databaseFromFixture(fromFixture, version);
      const fixture = await openDriver(fromFixture);
      const migrated = await openDriver(join(dir, "migrated.db"));
      applyMigrations(migrated, listMigrations().slice(0, version));
      assert.equal(schemaVersion(fixture), version);
      assert.deepEqual(schemaOf(fixture), schemaOf(migrated));
      for (const [table, { rows }] of snapshot(fixture)) assert.ok(rows.length > 0, `${table} has no rows`);
      fixture.close();
      migrated.close();
      cleanup();
    });
  }
});

for (const version of EARLIER) {
  describe(`upgrading a schema v${version} database to v${LATEST}`, () => {
    it("keeps every row of every table, row by row, every old column unchanged", async () => {
      const { dir, cleanup } = tempDir();
      const path = join(dir, "old.db");
      await databaseFromFixture(path, version);
      const oldDriver = await openDriver(path);
      const before = snapshot(oldDriver);
      oldDriver.close();

      const store = await SqliteTaskStore.open(path);
      assert.equal(schemaVersion(store.driver), LATEST);
      const after = snapshot(store.driver);
      for (const [table, old] of before) {
        const rebuilt = REBUILT[table];
        if (rebuilt && version < rebuilt.since) {
          const rows = after.get(rebuilt.table)?.rows ?? [];
          const expected = old.rows.map(rebuilt.map);
          const kept = rows.map((row) => Object.fromEntries(Object.keys(expected[0] ?? {}).map((k) => [k, row[k]])));
          assert.deepEqual(kept, expected, `${table} rows, now in ${rebuilt.table}`);
          continue;
        }
        const now = after.get(table);
        assert.ok(now, `table ${table} is gone`);
        for (const column of old.columns) assert.ok(now.columns.includes(column), `${table}.${column} is gone`);
        assert.equal(now.rows.length, old.rows.length, `${table}: row count`);
        // New columns may be filled by the migration (defaults, or values derived from old rows);
        // what an older Arbeit wrote must come through exactly.
        now.rows.forEach((row, i) => {
          const kept = Object.fromEntries(Object.keys(old.rows[i]!).map((key) => [key, row[key]]));
          assert.deepEqual(kept, old.rows[i], `${table} row ${i + 1} changed`);
        });
      }
      await store.close();
      cleanup();
    });

    it("passes arbeit doctor, and every newer feature works on the migrated data", async () => {
      const { dir, cleanup } = tempDir();
      const path = join(dir, "old.db");
      await databaseFromFixture(path, version);
      const store = await SqliteTaskStore.open(path);
      // Checked as of when the fixture was written: a lease it holds has run out since, which is
      // time passing, not damage from the upgrade.
      const written = store.driver.prepare("SELECT MAX(timestamp) AS at FROM events").get<{ at: string }>()!.at;
      const report = await runDoctor(store, { now: () => new Date(written) });
      assert.equal(report.ok, true, JSON.stringify(report.checks.filter((c) => !c.ok)));

      const { call, ok } = catalogueOn(store, dir, { session: "ses-upgrade", agent: "upgrader" });
      const { tasks: open } = await ok("arbeit_query", { query: "tasks", params: { status: "open", full: true } });
      assert.ok(open.length > 0, "the fixture has open tasks");
      const target = open[0];

      // Optimistic concurrency on a migrated task.
      const stale = await call("arbeit_task_update", {
        task_id: target.id,
        priority: 4,
        expected_version: target.version + 7,
      });
      assert.equal(stale.success === false && stale.error.code, "VERSION_CONFLICT");
      const updated = await ok("arbeit_task_update", {
        task_id: target.id,
        priority: 4,
        expected_version: target.version,
      });
      assert.equal(updated.task.version, target.version + 1);

      // Risk and impact on a task older than them: not assessed until set.
      assert.equal(target.risk, null);
      const assessed = await ok("arbeit_task_update", { task_id: target.id, risk: "high", impact: "low" });
      assert.deepEqual([assessed.task.risk, assessed.task.impact], ["high", "low"]);

      // Claims with leases.
      const claimed = await ok("arbeit_task_claim", { task_id: target.id, lease_seconds: 600 });
      assert.equal(claimed.claimed, true);
      const taken = await call(
        "arbeit_task_claim",
        { task_id: target.id },
        { agent: "someone-else", session: "ses-2" },
      );
      assert.equal(taken.success === false && taken.error.code, "ALREADY_CLAIMED");
      const next = await ok("arbeit_task_claim", { next: true }, { agent: "second", session: "ses-3" });
      assert.notEqual(next.task?.id, target.id);

      // Idempotency: a repeated request_id replays and writes nothing.
      const events = () => Number(store.driver.prepare("SELECT COUNT(*) AS n FROM events").get<{ n: number }>()!.n);
      const first = await ok("arbeit_task_create", { title: "after the upgrade", request_id: "req-1" });
      const count = events();
      const again = await ok("arbeit_task_create", { title: "after the upgrade", request_id: "req-1" });
      assert.equal(again.task.id, first.task.id);
      assert.equal(events(), count);

      // Memory and resume.
      await ok("arbeit_memory", { action: "set", key: "upgraded", value: { from: version } });
      assert.deepEqual((await ok("arbeit_memory", { action: "get", key: "upgraded" })).entry.value, { from: version });
      const briefing = await ok("arbeit_resume", {});
      assert.ok(briefing, "resume returns a briefing");

      // Old rows keep working with the old tools: supersede a migrated entry, finish migrated progress.
      const entry = store.driver
        .prepare("SELECT id, task_id FROM context_entries WHERE superseded_by IS NULL ORDER BY rowid LIMIT 1")
        .get<{ id: string; task_id: string }>()!;
      const deletedTask = store.driver
        .prepare("SELECT 1 AS d FROM tasks WHERE id = ? AND deleted_at IS NOT NULL")
        .get(entry.task_id);
      if (!deletedTask) {
        await ok("arbeit_context_add", {
          task_id: entry.task_id,
          type: "note",
          content: "newer",
          supersede_entry_id: entry.id,
        });
      }
      const pending = store.driver
        .prepare(
          "SELECT p.id FROM progress_items p JOIN tasks t ON t.id = p.task_id WHERE p.completed = 0 AND t.deleted_at IS NULL LIMIT 1",
        )
        .get<{ id: string }>();
      if (pending) await ok("arbeit_progress_complete", { item_ids: [pending.id] });

      // The calls above ran on today's clock and swept the leases that ran out, so today is clean.
      const after = await runDoctor(store);
      assert.equal(after.ok, true, JSON.stringify(after.checks.filter((c) => !c.ok)));
      await store.close();
      cleanup();
    });
  });
}
