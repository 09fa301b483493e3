import { type IdKind, newId } from "../../domain/ids.js";
import type { SqlDb, SqlValue } from "./database.js";

const texts = new Map<string, string>();

function insertText(table: string, columns: readonly string[], onClash: string): string {
  const key = `${table}(${columns.join(",")})${onClash}`;
  let sql = texts.get(key);
  if (sql === undefined) {
    sql = `INSERT INTO ${table} (id, ${columns.join(", ")}) VALUES (?${", ?".repeat(columns.length)})${onClash}`;
    texts.set(key, sql);
  }
  return sql;
}

/**
 * Inserts a row under a fresh random id and returns the id. On Postgres the insert is sent
 * without waiting (SqlDb.later): the rare clash is a unique violation, and the transaction runs
 * again with fresh ids. On SQLite, where waiting costs nothing, a clash draws again at once.
 */
export async function insertWithId(
  db: SqlDb,
  kind: IdKind,
  table: string,
  columns: readonly string[],
  values: readonly SqlValue[],
): Promise<string> {
  if (db.dialect.name === "postgres") {
    const id = newId(kind);
    db.later(insertText(table, columns, ""), id, ...values);
    return id;
  }
  const sql = insertText(table, columns, " ON CONFLICT (id) DO NOTHING");
  for (;;) {
    const id = newId(kind);
    if ((await db.run(sql, id, ...values)) === 1) return id;
  }
}

/** JSON text of an optional object column. */
export function jsonColumn(value: Record<string, unknown> | null): string | null {
  return value === null ? null : JSON.stringify(value);
}
