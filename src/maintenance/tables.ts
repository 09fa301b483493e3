import type { SqlDriver } from "../store/sqlite/driver.js";

/**
 * The tables of whatever schema the database is at, read from SQLite itself, so that export,
 * import and their tests cover a table a later migration adds without being told about it.
 */
export interface TableInfo {
  name: string;
  columns: string[];
  /**
   * True when rows have a rowid that is not one of the columns. It is carried through export and
   * import because some reads order by it (context and progress keep insertion order).
   */
  hiddenRowid: boolean;
  /** Rows have no rowid at all (WITHOUT ROWID tables): read in primary-key order. */
  withoutRowid: boolean;
}

/** SQLite's own bookkeeping table for AUTOINCREMENT counters; exported as data of its own. */
export const SEQUENCE_TABLE = "sqlite_sequence";

export function quoteName(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Every user table in creation order (parents before the tables that reference them). */
export function userTables(driver: SqlDriver): TableInfo[] {
  const tables = driver
    .prepare(
      `SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
       ORDER BY rowid`,
    )
    .all<{ name: string; sql: string }>();
  return tables.map(({ name, sql }) => {
    const columns = driver
      .prepare("SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid")
      .all<{ name: string; type: string; pk: number }>(name);
    const keys = columns.filter((column) => column.pk > 0);
    const rowidAlias = keys.length === 1 && keys[0]!.type.toUpperCase() === "INTEGER";
    const withoutRowid = /\bWITHOUT\s+ROWID\b/i.test(sql);
    return {
      name,
      columns: columns.map((column) => column.name),
      hiddenRowid: !rowidAlias && !withoutRowid,
      withoutRowid,
    };
  });
}

export function hasSequenceTable(driver: SqlDriver): boolean {
  return driver.prepare("SELECT 1 AS found FROM sqlite_master WHERE name = ?").get(SEQUENCE_TABLE) !== undefined;
}

export function rowCount(driver: SqlDriver, table: string): number {
  return Number(driver.prepare(`SELECT COUNT(*) AS n FROM ${quoteName(table)}`).get<{ n: number }>()?.n ?? 0);
}

/** True when no user table holds a row. */
export function isEmpty(driver: SqlDriver): boolean {
  return userTables(driver).every((table) => rowCount(driver, table.name) === 0);
}
