import { type IdKind, newId } from "../../domain/ids.js";
import type { SqlDb, SqlValue } from "./database.js";

const texts = new Map<string, string>();

function insertText(table: string, columns: readonly string[]): string {
  const key = `${table}(${columns.join(",")})`;
  let sql = texts.get(key);
  if (sql === undefined) {
    sql = `INSERT INTO ${table} (id, ${columns.join(", ")}) VALUES (?${", ?".repeat(columns.length)})
      ON CONFLICT (id) DO NOTHING`;
    texts.set(key, sql);
  }
  return sql;
}

/** Inserts a row under a fresh random id, drawing again on the rare clash; returns the id. */
export async function insertWithId(
  db: SqlDb,
  kind: IdKind,
  table: string,
  columns: readonly string[],
  values: readonly SqlValue[],
): Promise<string> {
  const sql = insertText(table, columns);
  for (;;) {
    const id = newId(kind);
    if ((await db.run(sql, id, ...values)) === 1) return id;
  }
}

/** JSON text of an optional object column. */
export function jsonColumn(value: Record<string, unknown> | null): string | null {
  return value === null ? null : JSON.stringify(value);
}
