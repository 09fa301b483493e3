import type { RawRow } from "../rows.js";

/** The one thing a Postgres transaction needs from a pg client: run a parameterised query. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: RawRow[]; rowCount: number | null }>;
}

export type PgValue = string | number | boolean | null | readonly string[];

const converted = new Map<string, string>();

/**
 * The SQL texts of this store use `?` placeholders, like the SQLite store's, so the two read alike
 * side by side; this numbers them for Postgres ($1, $2, ...). No statement here contains a `?`
 * anywhere else (no string literal, no jsonb `?` operator).
 */
export function positional(sql: string): string {
  let text = converted.get(sql);
  if (text === undefined) {
    let n = 0;
    text = sql.replace(/\?/g, () => `$${++n}`);
    converted.set(sql, text);
  }
  return text;
}

/** Runs SQL with `?` placeholders on one client. */
export class Sql {
  readonly #client: Queryable;

  constructor(client: Queryable) {
    this.#client = client;
  }

  async all(sql: string, ...params: PgValue[]): Promise<RawRow[]> {
    return (await this.#client.query(positional(sql), params)).rows;
  }

  async get(sql: string, ...params: PgValue[]): Promise<RawRow | undefined> {
    return (await this.#client.query(positional(sql), params)).rows[0];
  }

  /** Runs a statement and returns how many rows it changed. */
  async run(sql: string, ...params: PgValue[]): Promise<number> {
    return (await this.#client.query(positional(sql), params)).rowCount ?? 0;
  }
}
