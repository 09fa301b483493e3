import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ArbeitError } from "../../domain/errors.js";
import type { SqlDriver } from "./driver.js";

/** Migrations live beside the package (migrations/sqlite/NNNN_name.sql), numbered from 0001. */
export const SQLITE_MIGRATIONS_DIR = fileURLToPath(new URL("../../../migrations/sqlite/", import.meta.url));

export interface Migration {
  version: number;
  name: string;
  path: string;
}

export function listMigrations(dir: string = SQLITE_MIGRATIONS_DIR): Migration[] {
  const migrations = readdirSync(dir)
    .filter((name) => /^\d{4}_[a-z0-9_]+\.sql$/.test(name))
    .sort()
    .map((name) => ({ version: Number(name.slice(0, 4)), name, path: `${dir}/${name}` }));
  migrations.forEach((migration, index) => {
    // A gap means a file went missing: refuse to guess what the schema is.
    if (migration.version !== index + 1) {
      throw new Error(`Migration numbering is broken at ${migration.name}: expected ${index + 1}.`);
    }
  });
  return migrations;
}

export function schemaVersion(driver: SqlDriver): number {
  return driver.prepare("PRAGMA user_version").get<{ user_version: number }>()?.user_version ?? 0;
}

/**
 * Brings the database to the newest schema. Runs inside the caller's write lock so that two
 * processes opening a fresh database at once apply each migration exactly once.
 * A database newer than this code is an error, never a silent downgrade.
 */
export function applyMigrations(driver: SqlDriver, migrations: Migration[] = listMigrations()): number {
  const current = schemaVersion(driver);
  const latest = migrations.length;
  if (current > latest) {
    throw new ArbeitError(
      "SCHEMA_TOO_NEW",
      `The database is at schema version ${current}, but this Arbeit only knows up to ${latest}.`,
      { details: { database_version: current, supported_version: latest } },
    );
  }
  for (const migration of migrations.slice(current)) {
    driver.exec(readFileSync(migration.path, "utf8"));
    driver.exec(`PRAGMA user_version = ${migration.version}`);
  }
  return latest;
}
