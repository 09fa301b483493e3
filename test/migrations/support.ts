import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ArbeitService } from "../../src/service/arbeit-service.js";
import type { Caller } from "../../src/service/caller.js";
import type { SqlDriver } from "../../src/store/sqlite/driver.js";
import { openDriver } from "../../src/store/sqlite/open-driver.js";
import type { SqliteTaskStore } from "../../src/store/sqlite/sqlite-task-store.js";
import { findTool } from "../../src/tools/catalogue.js";
import { type Envelope, invokeTool } from "../../src/tools/envelope.js";

export const FIXTURES = fileURLToPath(new URL("../fixtures/", import.meta.url));

export function fixturePath(version: number): string {
  return join(FIXTURES, `schema-v${version}.sql`);
}

export function hasFixture(version: number): boolean {
  return existsSync(fixturePath(version));
}

/** A database file at schema `version`, built from the fixture SQL kept in the repo. */
export async function databaseFromFixture(path: string, version: number): Promise<void> {
  const driver = await openDriver(path);
  try {
    driver.exec(readFileSync(fixturePath(version), "utf8"));
  } finally {
    driver.close();
  }
}

export interface TableSnapshot {
  columns: string[];
  /** Rows in rowid order, each with its rowid under `__rowid` where the table has one. */
  rows: Array<Record<string, unknown>>;
}

/** Every user table (and SQLite's AUTOINCREMENT counters), row by row, in rowid order. */
export function snapshot(driver: SqlDriver): Map<string, TableSnapshot> {
  const tables = driver
    .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name <> 'sqlite_stat1' ORDER BY name")
    .all<{ name: string; sql: string }>();
  const out = new Map<string, TableSnapshot>();
  for (const { name, sql } of tables) {
    const columns = driver
      .prepare("SELECT name FROM pragma_table_info(?) ORDER BY cid")
      .all<{ name: string }>(name)
      .map((c) => c.name);
    const withoutRowid = /WITHOUT\s+ROWID/i.test(sql);
    const select = withoutRowid
      ? `SELECT * FROM "${name}" ORDER BY 1`
      : name === "sqlite_sequence"
        ? `SELECT * FROM "${name}" ORDER BY name`
        : `SELECT rowid AS __rowid, * FROM "${name}" ORDER BY rowid`;
    out.set(name, { columns, rows: driver.prepare(select).all() });
  }
  return out;
}

/** The schema objects (tables, indexes) as SQLite records them, for comparing two databases. */
export function schemaOf(driver: SqlDriver): Array<{ type: string; name: string; sql: string | null }> {
  return driver
    .prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
    .all<{ type: string; name: string; sql: string | null }>()
    .map((row) => ({ ...row, sql: row.sql?.replace(/\s+/g, " ") ?? null }));
}

/** Runs tools through the catalogue on an already opened store, as every front end does. */
export function catalogueOn(store: SqliteTaskStore, dir: string, caller: Caller) {
  const service = new ArbeitService(store, { projectRoot: dir });
  const call = (tool: string, args: unknown, override: Partial<Caller> = {}) =>
    invokeTool(findTool(tool)!, args, {
      caller: { ...caller, ...override },
      cwd: dir,
      service: async () => service,
    }) as Promise<Envelope<any>>;
  const ok = async (tool: string, args: unknown, override: Partial<Caller> = {}) => {
    const envelope = await call(tool, args, override);
    if (!envelope.success) throw new Error(`${tool} failed: ${JSON.stringify(envelope.error)}`);
    return envelope.data;
  };
  return { service, call, ok };
}
