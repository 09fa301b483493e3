import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SqlDb } from "../src/store/sql/database.js";
import { expectEnvelope, openHarness, postgresLocation } from "./harness.js";
import { latencyRow } from "./latency.js";
import type { ResultRow } from "./results.js";

/**
 * Bulk graph changes: one task blocks `dependants` open tasks (a store of its own, written
 * straight into the tables as the service would leave them, as test/hostile/scale.test.ts does),
 * and it is completed and reopened `rounds` times, then deleted, each through the catalogue
 * (arbeit_task_update, arbeit_task_delete). What such a change costs is what the schema makes
 * it write: with the blocker's state read at query time, a handful of rows.
 */
export const HUB_ROWS = ["hub_complete", "hub_reopen", "hub_delete"];
export const HUB_TARGET_MS = 1000;

const HUB = "tkt-hub00001";
const AT = "2025-01-01T00:00:00.000Z";
const ROWS_PER_INSERT = 1000;
const dependant = (i: number) => `tkt-d${i.toString(36).padStart(7, "0")}`;

async function insertRows(
  db: SqlDb,
  head: string,
  row: string,
  count: number,
  values: (i: number) => string[],
): Promise<void> {
  for (let start = 0; start < count; start += ROWS_PER_INSERT) {
    const end = Math.min(start + ROWS_PER_INSERT, count);
    const params: string[] = [];
    const rows: string[] = [];
    for (let i = start; i < end; i++) {
      rows.push(row);
      params.push(...values(i));
    }
    await db.run(`${head} VALUES ${rows.join(", ")}`, ...params);
  }
}

export async function measureHub(options: {
  engine: "sqlite" | "postgres";
  dependants: number;
  rounds: number;
  log: (line: string) => void;
}): Promise<ResultRow[]> {
  const dir = mkdtempSync(join(tmpdir(), "arbeit-bench-hub-"));
  const url = process.env.ARBEIT_BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const schema = "arbeit_bench_hub";
  const postgres = options.engine === "postgres";
  if (postgres) {
    const { default: pg } = await import("pg");
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
  const location = postgres ? postgresLocation(url, schema) : join(dir, "arbeit.db");
  const h = await openHarness(location, dir);
  try {
    const started = Date.now();
    await h.store.transaction("write", async (db) => {
      const task = "INSERT INTO tasks (id, title, status, priority, created_at, updated_at)";
      await db.run(`${task} VALUES (?, 'hub', 'open', 1, ?, ?)`, HUB, AT, AT);
      await insertRows(db, task, "(?, 'dependant', 'open', 2, ?, ?)", options.dependants, (i) => [
        dependant(i),
        AT,
        AT,
      ]);
      // Postgres runs row triggers one statement per row; the flag they set is written directly
      // (2: the blocker is a hub, whose state readers look up).
      if (postgres) await db.run("ALTER TABLE relationships DISABLE TRIGGER USER");
      await insertRows(
        db,
        "INSERT INTO relationships (id, from_task_id, to_task_id, type, open_edge, created_at)",
        "(?, ?, ?, 'blocks', 2, ?)",
        options.dependants,
        (i) => [`rel-a${i.toString(36).padStart(7, "0")}`, HUB, dependant(i), AT],
      );
      if (postgres) await db.run("ALTER TABLE relationships ENABLE TRIGGER USER");
    });
    await h.store.transaction("write", (db) => db.run("ANALYZE"));
    options.log(
      `Hub store: one task blocking ${options.dependants.toLocaleString("en-US")} on ${options.engine}, written in ${((Date.now() - started) / 1000).toFixed(0)} s.`,
    );
    const timed = async (label: string, tool: string, args: unknown): Promise<number> => {
      const start = process.hrtime.bigint();
      const envelope = await h.call(tool, args);
      const took = Number(process.hrtime.bigint() - start) / 1e6;
      expectEnvelope(envelope, label);
      return took;
    };
    const complete: number[] = [];
    const reopen: number[] = [];
    for (let round = 0; round < options.rounds; round++) {
      complete.push(await timed("complete the hub", "arbeit_task_update", { task_id: HUB, status: "completed" }));
      reopen.push(await timed("reopen the hub", "arbeit_task_update", { task_id: HUB, status: "open" }));
    }
    const deleted = await timed("delete the hub", "arbeit_task_delete", { task_id: HUB });
    const note = `one task blocking ${options.dependants.toLocaleString("en-US")} open tasks, ${options.engine}`;
    return [
      {
        ...latencyRow(
          "hub_complete",
          "complete a task that blocks 200,000 (arbeit_task_update)",
          complete,
          HUB_TARGET_MS,
        ),
        note,
      },
      { ...latencyRow("hub_reopen", "reopen it (arbeit_task_update)", reopen, HUB_TARGET_MS), note },
      { ...latencyRow("hub_delete", "delete it (arbeit_task_delete), once", [deleted], HUB_TARGET_MS), note },
    ];
  } finally {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
    if (postgres) {
      const { default: pg } = await import("pg");
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  }
}
