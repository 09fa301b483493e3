import { createHash } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { listMigrations } from "../src/store/sqlite/migrate.js";
import { SqliteTaskStore } from "../src/store/sqlite/sqlite-task-store.js";
import { type Manifest, Seeder, type SeedParams } from "./seed.js";

/**
 * The seeded store is cached under bench/.data/, keyed by everything that shapes it: the schema
 * (the migration files' text), the seed parameters and the seeder's own source. A dataset the
 * same seeder built at an older schema is migrated forward rather than seeded again. Each run
 * works on a fresh copy, so the writes it measures never leak into the next run.
 */

const SEED_SOURCE = new URL("./seed.ts", import.meta.url);

export interface Dataset {
  manifest: Manifest;
  /** The pristine cached file. */
  cached: string;
  /** This run's copy, in a project folder like a real one: <dir>/.arbeit/arbeit.db. */
  working: string;
  projectDir: string;
  /** True when this run built the dataset (its seeding time is then fresh). */
  built: boolean;
}

/** The key of a dataset seeded at schema `version` (by default the newest) by this seeder. */
export function datasetKey(params: SeedParams, version = listMigrations().length): string {
  const migrations = listMigrations().slice(0, version);
  const hash = createHash("sha256");
  for (const migration of migrations) hash.update(`${migration.name}\n${readFileSync(migration.path, "utf8")}\n`);
  hash.update(readFileSync(SEED_SOURCE));
  hash.update(JSON.stringify(params));
  return `v${migrations.length}-${params.tasks}-${params.chain}-${hash.digest("hex").slice(0, 12)}`;
}

/**
 * A cached dataset this seeder built with these parameters at an older schema, if there is one:
 * its key is the one this code gives that version, so the seeder, the parameters and every
 * migration up to it are unchanged, and migrating it forward gives the store an upgrade gives a
 * user (seconds, where seeding anew takes minutes).
 */
function olderDataset(dataDir: string, params: SeedParams): string | undefined {
  for (let version = listMigrations().length - 1; version >= 1; version--) {
    const key = datasetKey(params, version);
    const db = join(dataDir, `dataset-${key}.db`);
    if (existsSync(db) && existsSync(join(dataDir, `dataset-${key}.json`))) return key;
  }
  return undefined;
}

function removeDb(path: string): void {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(path + suffix, { force: true });
}

export async function prepareDataset(
  dataDir: string,
  params: SeedParams,
  options: { fresh: boolean; log: (line: string) => void },
): Promise<Dataset> {
  mkdirSync(dataDir, { recursive: true });
  const key = datasetKey(params);
  const cached = join(dataDir, `dataset-${key}.db`);
  const manifestPath = join(dataDir, `dataset-${key}.json`);
  let built = false;
  const older = options.fresh || existsSync(cached) ? undefined : olderDataset(dataDir, params);
  if (older !== undefined) {
    const building = join(dataDir, `building-${key}.db`);
    removeDb(building);
    copyFileSync(join(dataDir, `dataset-${older}.db`), building);
    options.log(`Migrating the cached dataset ${older} to the current schema (key ${key})...`);
    const store = await SqliteTaskStore.open(building);
    await store.close();
    // With whatever of it the write-ahead log still holds.
    removeDb(cached);
    for (const suffix of ["", "-wal", "-shm"]) {
      if (existsSync(building + suffix)) renameSync(building + suffix, cached + suffix);
    }
    copyFileSync(join(dataDir, `dataset-${older}.json`), manifestPath);
    for (const suffix of ["db", "json"]) rmSync(join(dataDir, `dataset-${older}.${suffix}`), { force: true });
  }
  if (options.fresh || !existsSync(cached) || !existsSync(manifestPath)) {
    // Stale datasets of other keys are large; keep only the one in use.
    for (const name of readdirSync(dataDir)) {
      if (/^(dataset|building)-.*\.(db|json)(-wal|-shm)?$/.test(name)) rmSync(join(dataDir, name), { force: true });
    }
    const building = join(dataDir, `building-${key}.db`);
    removeDb(building);
    options.log(`Seeding ${params.tasks} tasks through the service (key ${key}); this takes a few minutes...`);
    const manifest = await Seeder.run(building, params, options.log).catch((error: unknown) => {
      removeDb(building);
      throw error;
    });
    renameSync(building, cached);
    removeDb(building);
    writeFileSync(manifestPath, JSON.stringify(manifest));
    built = true;
  } else {
    options.log(`Reusing the cached dataset ${cached} (--fresh rebuilds it).`);
  }
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as Manifest;
  const projectDir = join(dataDir, "project");
  const working = join(projectDir, ".arbeit", "arbeit.db");
  mkdirSync(join(projectDir, ".arbeit"), { recursive: true });
  removeDb(working);
  copyFileSync(cached, working);
  keepClaimsLive(working);
  return { manifest, cached, working, projectDir, built };
}

/** How long the claims of the dataset's agents at work stay live from the start of a run. */
const CLAIMS_LIVE_MS = 2 * 3_600_000;

/**
 * The seeded agents at work hold their tasks on leases that the database's clock ran out minutes
 * after seeding, so without this a run's figures would depend on how long ago the dataset was
 * built: ready lists and claims do more when other sessions hold work. Each run's copy therefore
 * starts with those claims live (2,293 of them at 100,000 tasks), whatever the copy's age.
 */
function keepClaimsLive(file: string): void {
  const db = new Database(file);
  try {
    const held = `lease_expires_at IS NOT NULL AND claim_session IS NOT NULL AND deleted_at IS NULL
      AND status IN ('open', 'in_progress')`;
    const latest = (
      db.prepare(`SELECT MAX(lease_expires_at) AS latest FROM tasks WHERE ${held}`).get() as {
        latest: string | null;
      }
    ).latest;
    if (latest === null) return;
    // Moved as a whole, so that the leases keep the order and spacing seeding gave them.
    const shift = (Date.now() + CLAIMS_LIVE_MS - Date.parse(latest)) / 1000;
    db.prepare(
      `UPDATE tasks SET lease_expires_at = strftime('%Y-%m-%dT%H:%M:%fZ', lease_expires_at, ?) WHERE ${held}`,
    ).run(`${shift >= 0 ? "+" : ""}${shift.toFixed(3)} seconds`);
  } finally {
    db.close();
  }
}
