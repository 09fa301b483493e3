import type { SqlValue } from "./database.js";

/**
 * The few places where SQLite and Postgres spell the same thing differently. Every statement of
 * the store is written once and asks its dialect for these pieces; a query that is tuned per
 * engine (see ready.ts) says so where it stands.
 */
export interface Dialect {
  readonly name: "sqlite" | "postgres";
  /** `column` is one of the values of a list parameter made by `listParam` (one `?`, any length). */
  inList(column: string): string;
  listParam(values: readonly string[]): SqlValue;
  /** The values of a list parameter made by `listParam`, as rows of one column (to join a subquery's in a UNION ALL). */
  readonly listRows: string;
  /** The larger of two values. */
  greatest(a: string, b: string): string;
  /** The distinct values of `column` in a group, joined by commas. */
  joinDistinct(column: string): string;
  /** A JSON array (as text) of `expr` over rows that come in `order`. */
  jsonArray(expr: string, order: string): string;
  /** Tells SQLite's planner which index to use; Postgres plans with statistics instead. */
  indexedBy(index: string): string;
  /**
   * A join that keeps the left side as the outer loop. SQLite's planner has no statistics for a
   * recursive walk's frontier and otherwise scans a whole index at every step.
   */
  readonly outerJoin: string;
  /** A text parameter that seeds a recursive query over ids (Postgres needs the id collation). */
  readonly idParam: string;
  /** Locks the rows a write transaction reads (Postgres); SQLite's writer already holds the file. */
  forUpdate(table: string, options?: { skipLocked?: boolean }): string;
  /** The current time as an ISO-8601 UTC text with milliseconds, read from the database's clock. */
  readonly now: string;
  /** Inequality that treats NULL as a value: `a <distinct> b` is true when exactly one is NULL. */
  readonly distinct: string;
}

export const sqliteDialect: Dialect = {
  name: "sqlite",
  // json_each takes the whole list as one parameter: one prepared statement for any length, and
  // no limit on how many values (SQLite caps bound variables at 32,766).
  inList: (column) => `${column} IN (SELECT value FROM json_each(?))`,
  listParam: (values) => JSON.stringify(values),
  listRows: "SELECT value FROM json_each(?)",
  greatest: (a, b) => `MAX(${a}, ${b})`,
  joinDistinct: (column) => `group_concat(DISTINCT ${column})`,
  // SQLite aggregates in the order its input subquery yields.
  jsonArray: (expr) => `json_group_array(${expr})`,
  indexedBy: (index) => `INDEXED BY ${index}`,
  outerJoin: "CROSS JOIN",
  idParam: "?",
  forUpdate: () => "",
  now: "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
  distinct: "IS NOT",
};

export const postgresDialect: Dialect = {
  name: "postgres",
  inList: (column) => `${column} = ANY(?::text[])`,
  listParam: (values) => values,
  listRows: `SELECT v COLLATE "C" FROM unnest(?::text[]) AS u(v)`,
  greatest: (a, b) => `GREATEST(${a}, ${b})`,
  joinDistinct: (column) => `string_agg(DISTINCT ${column}, ',')`,
  jsonArray: (expr, order) => `json_agg(${expr} ORDER BY ${order})::text`,
  indexedBy: () => "",
  outerJoin: "JOIN",
  idParam: `?::text COLLATE "C"`,
  forUpdate: (table, options) => ` FOR UPDATE OF ${table}${options?.skipLocked ? " SKIP LOCKED" : ""}`,
  now: `to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
  distinct: "IS DISTINCT FROM",
};

/**
 * Builds a module's SQL texts once per dialect. Statement caches key on the text, so each text
 * must be the same string every call; building them per call would also cost a hash each time.
 */
export function perDialect<T>(build: (d: Dialect) => T): (d: Dialect) => T {
  const built = new Map<Dialect, T>();
  return (d) => {
    let texts = built.get(d);
    if (texts === undefined) {
      texts = build(d);
      built.set(d, texts);
    }
    return texts;
  };
}
