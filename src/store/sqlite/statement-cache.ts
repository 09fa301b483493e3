import type { RawRow } from "../rows.js";
import type { SqlDriver, SqlStatement, SqlValue } from "./driver.js";

/** Prepares each SQL text once per connection and reuses it. */
export class StatementCache {
  readonly #driver: SqlDriver;
  readonly #statements = new Map<string, SqlStatement>();

  constructor(driver: SqlDriver) {
    this.#driver = driver;
  }

  stmt(sql: string): SqlStatement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#driver.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  all(sql: string, ...params: SqlValue[]): RawRow[] {
    return this.stmt(sql).all<RawRow>(...params);
  }

  get(sql: string, ...params: SqlValue[]): RawRow | undefined {
    return this.stmt(sql).get<RawRow>(...params);
  }
}
