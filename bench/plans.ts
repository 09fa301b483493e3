/**
 * `node --import tsx bench/plans.ts [name ...]`: the SQLite query plan of every statement each
 * measurement runs, on the benchmark's dataset copy (run `npm run bench` once first). The tool
 * for finding a slow query's cause: a SCAN where a SEARCH was meant, a join in the wrong order.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { SqlValue } from "../src/store/sqlite/driver.js";
import { SqliteTaskStore } from "../src/store/sqlite/sqlite-task-store.js";
import { openHarness } from "./harness.js";
import { LATENCY, missingRequirement } from "./measurements.js";
import type { Manifest } from "./seed.js";
import { Rng } from "./stats.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const projectDir = join(ROOT, "bench", ".data", "project");
const dbPath = join(projectDir, ".arbeit", "arbeit.db");
const manifestFile = process.env.BENCH_MANIFEST;

async function main(): Promise<void> {
  if (!existsSync(dbPath) || !manifestFile) {
    throw new Error("Run `npm run bench` first, then pass BENCH_MANIFEST=bench/.data/dataset-<key>.json.");
  }
  const { readFileSync } = await import("node:fs");
  const manifest = JSON.parse(readFileSync(manifestFile, "utf8")) as Manifest;
  const h = await openHarness(dbPath, projectDir);
  if (!(h.store instanceof SqliteTaskStore))
    throw new Error("plans.ts reads SQLite's query plans: a SQLite store only.");
  const driver = h.store.driver;
  const seen = new Map<string, SqlValue[]>();
  let recording = false;
  const prepare = driver.prepare.bind(driver);
  // Statements are prepared once and cached, so wrap the statement to see each run's parameters.
  (driver as { prepare: typeof driver.prepare }).prepare = (sql: string) => {
    const statement = prepare(sql);
    const note = (params: SqlValue[]) => {
      if (recording && !seen.has(sql)) seen.set(sql, params);
    };
    return {
      run: (...params: SqlValue[]) => {
        note(params);
        return statement.run(...params);
      },
      get: <T>(...params: SqlValue[]) => {
        note(params);
        return statement.get<T>(...params);
      },
      all: <T>(...params: SqlValue[]) => {
        note(params);
        return statement.all<T>(...params);
      },
      values: (...params: SqlValue[]) => {
        note(params);
        return statement.values(...params);
      },
    };
  };
  const only = process.argv.slice(2);
  const ctx = { h, m: manifest, rng: new Rng(1) };
  for (const spec of LATENCY) {
    if (only.length > 0 && !only.includes(spec.name)) continue;
    if (missingRequirement(spec, h)) continue;
    seen.clear();
    await spec.before?.(ctx, 0);
    const call = spec.call(ctx, 0);
    recording = true;
    const envelope = await h.call(call.tool, call.args, call.caller);
    recording = false;
    await spec.after?.(ctx, 0, envelope);
    process.stdout.write(`\n=== ${spec.name}: ${spec.label}\n`);
    for (const [sql, params] of seen) {
      if (/^\s*(BEGIN|COMMIT|ROLLBACK|PRAGMA)/i.test(sql)) continue;
      const plan = prepare(`EXPLAIN QUERY PLAN ${sql}`).all<{ detail: string }>(...params);
      process.stdout.write(`\n${sql.replace(/\s+/g, " ").slice(0, 240)}\n`);
      for (const step of plan) process.stdout.write(`    ${step.detail}\n`);
    }
  }
  await h.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`plans: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
