import type { RawRow } from "../rows.js";
import type { Dialect } from "./dialect.js";

/**
 * A value bound to a `?` placeholder. Arrays are list parameters only, made by
 * `dialect.listParam` (Postgres binds them as text[]; SQLite receives them as JSON text).
 */
export type SqlValue = string | number | bigint | null | readonly string[];

/**
 * The small async interface every query in the store runs on: one connection inside one
 * transaction. SQL texts use `?` placeholders on both engines; each adapter prepares a text once
 * per connection and reuses the prepared statement.
 */
export interface SqlDb {
  readonly dialect: Dialect;
  /** True inside a write transaction: only there may rows be locked. */
  readonly writable: boolean;
  all(sql: string, ...params: SqlValue[]): Promise<RawRow[]>;
  get(sql: string, ...params: SqlValue[]): Promise<RawRow | undefined>;
  /**
   * The rows as arrays of their columns' values, in the statement's column order: for reads of
   * tens of thousands of rows (a store's whole graph), where an object per row is most of the cost.
   */
  tuples(sql: string, ...params: SqlValue[]): Promise<unknown[][]>;
  /** Runs a statement and returns how many rows it changed. */
  run(sql: string, ...params: SqlValue[]): Promise<number>;
  /**
   * Runs a write without waiting for it: on Postgres it travels with the statements after it (at
   * the latest with the COMMIT); SQLite runs it at once. If it fails, the transaction fails. On
   * Postgres the promise is its first returned row (undefined if it failed), for a caller that
   * wants the answer anyway; awaiting it inside the transaction costs the round trip `later` saves.
   */
  later(sql: string, ...params: SqlValue[]): Promise<RawRow | undefined>;
}

/**
 * A store that exposes its database to maintenance code (doctor, export, import, history
 * checks): the same transactions the service uses, with the raw connection inside.
 */
export interface SqlStore {
  readonly dialect: Dialect;
  readonly location: string;
  /** Runs `fn` in a transaction (a write is serialised like any other write). */
  transaction<T>(mode: "read" | "write", fn: (db: SqlDb) => Promise<T>): Promise<T>;
}
