import type { RawRow } from "../rows.js";
import type { SqlDb, SqlValue } from "../sql/database.js";
import { sqliteDialect } from "../sql/dialect.js";
import type { SqlValue as DriverValue, SqlDriver, SqlStatement } from "./driver.js";

/**
 * The query layer's database over one SQLite connection. Each SQL text is prepared once and
 * reused. The drivers are synchronous, so every call has finished when its promise is made.
 */
export class SqliteDb implements SqlDb {
  readonly dialect = sqliteDialect;
  // One connection serves reads and writes; SQLite's writer holds the whole file, so there are
  // no row locks to take.
  readonly writable = false;
  readonly #driver: SqlDriver;
  readonly #statements = new Map<string, SqlStatement>();

  constructor(driver: SqlDriver) {
    this.#driver = driver;
  }

  #stmt(sql: string): SqlStatement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#driver.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  // List parameters reach SQLite as JSON text (sqliteDialect.listParam), never as arrays.
  all(sql: string, ...params: SqlValue[]): Promise<RawRow[]> {
    try {
      return Promise.resolve(this.#stmt(sql).all<RawRow>(...(params as DriverValue[])));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  get(sql: string, ...params: SqlValue[]): Promise<RawRow | undefined> {
    try {
      return Promise.resolve(this.#stmt(sql).get<RawRow>(...(params as DriverValue[])));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  tuples(sql: string, ...params: SqlValue[]): Promise<unknown[][]> {
    try {
      return Promise.resolve(this.#stmt(sql).values(...(params as DriverValue[])));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  run(sql: string, ...params: SqlValue[]): Promise<number> {
    try {
      return Promise.resolve(this.#stmt(sql).run(...(params as DriverValue[])).changes);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Runs at once (nothing travels here); an error is thrown to the caller, failing the transaction. */
  later(sql: string, ...params: SqlValue[]): Promise<RawRow | undefined> {
    this.#stmt(sql).run(...(params as DriverValue[]));
    return Promise.resolve(undefined);
  }
}
