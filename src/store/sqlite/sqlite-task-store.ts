import { AsyncLocalStorage } from "node:async_hooks";
import { accessSync, closeSync, constants, existsSync, openSync, readSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { ArbeitError } from "../../domain/errors.js";
import { Mutex, mutexForFile } from "../mutex.js";
import type { SqlDb, SqlStore } from "../sql/database.js";
import { sqliteDialect } from "../sql/dialect.js";
import { sqlStoreTx } from "../sql/sql-tx.js";
import { rethrowAsStoreFailure } from "../store-errors.js";
import type { StoreTx, TaskStore } from "../task-store.js";
import { isBusyError, type SqlDriver } from "./driver.js";
import { applyMigrations, listMigrations, schemaVersion } from "./migrate.js";
import { openDriver } from "./open-driver.js";
import { SqliteDb } from "./sqlite-db.js";

const BUSY_TIMEOUT_MS = 5000;
const WAL_CHECKPOINT_PAGES = 10_000;
/** How long a writer keeps retrying past busy_timeout before giving up. */
const BUSY_RETRY_BUDGET_MS = 60_000;

/**
 * One AsyncLocalStorage for every store, not one per store: each instance stays registered with
 * async_hooks for the life of the process, and every await pays for all of them (after 2,000
 * stores were opened and closed, an await cost 1,000 times more).
 */
const OPEN_TRANSACTION = new AsyncLocalStorage<{ store: object; mode: "read" | "write" }>();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface SqliteStoreOptions {
  /** The database's clock, which leases run on. Default: this machine's. */
  clock?: () => Date;
  /**
   * The file must already hold a database (a project's store, found by looking for it): an
   * empty or foreign file is STORE_DAMAGED instead of being taken for a new, empty store.
   */
  existing?: boolean;
}

/**
 * The embedded default store: one SQLite file in WAL mode. Writes run in BEGIN IMMEDIATE
 * transactions and retry on SQLITE_BUSY with backoff, so callers never see the lock.
 */
export class SqliteTaskStore implements TaskStore, SqlStore {
  readonly location: string;
  readonly dialect = sqliteDialect;
  readonly #db: SqlDb;
  readonly #driver: SqlDriver;
  readonly #tx: StoreTx;
  /** One transaction at a time on this connection. */
  readonly #mutex = new Mutex();
  /** One writer at a time per file in this process (reads need no such turn in WAL mode). */
  readonly #writers: Mutex;
  /** Set while a transaction is open in this async context, so nested calls join it. */
  readonly #inTransaction = {
    getStore: (): "read" | "write" | undefined => {
      const open = OPEN_TRANSACTION.getStore();
      return open?.store === this ? open.mode : undefined;
    },
    run: <T>(mode: "read" | "write", fn: () => T): T => OPEN_TRANSACTION.run({ store: this, mode }, fn),
  };
  #closed = false;
  readonly #clock: () => Date;
  /** The database's time, read when the open transaction began. */
  #now = "";
  /** Why nothing can be written here (a read-only file or file system), when that is so. */
  readonly readOnly: string | undefined;

  private constructor(driver: SqlDriver, location: string, clock: () => Date, readOnly: string | undefined) {
    this.#driver = driver;
    this.location = location;
    this.#clock = clock;
    this.readOnly = readOnly;
    this.#writers = location === ":memory:" ? new Mutex() : mutexForFile(resolve(location));
    this.#db = new SqliteDb(driver);
    this.#tx = sqlStoreTx(this.#db, () => this.#now);
  }

  /**
   * Opens (creating if needed, unless `existing`) and migrates the database at `path` (":memory:"
   * for none). A database that cannot be written (read-only file system, no permission) is opened
   * for reading: every write is then STORE_READ_ONLY. Opening takes the write lock only to
   * migrate, so a reader never waits behind a long write. `clock` is the database's clock: for a
   * file on this machine, the machine's (settable in tests).
   */
  static async open(path: string, options: SqliteStoreOptions = {}): Promise<SqliteTaskStore> {
    if (options.existing && path !== ":memory:") checkDatabaseFile(path);
    const { driver, readOnly } = await openWritableOrNot(path).catch((error) => rethrowAsStoreFailure(error, path));
    try {
      driver.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      if (path !== ":memory:" && !readOnly) driver.exec("PRAGMA journal_mode = WAL");
      driver.exec("PRAGMA synchronous = NORMAL");
      // Checkpoint every ~40 MB of WAL rather than SQLite's ~4 MB: agents' writes keep dirtying
      // the same hot pages (the head of the ready index, the tail of the event log), and a longer
      // interval copies each of them into the database once instead of over and over. The WAL
      // file grows to that size between checkpoints.
      driver.exec(`PRAGMA wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
      driver.exec("PRAGMA foreign_keys = ON");
      const store = new SqliteTaskStore(driver, path, options.clock ?? (() => new Date()), readOnly);
      const current = schemaVersion(driver);
      const latest = listMigrations().length;
      if (current !== latest) {
        // Also the check for a schema newer than this code, which it refuses.
        if (current > latest) applyMigrations(driver);
        if (readOnly !== undefined) {
          throw new ArbeitError(
            "STORE_READ_ONLY",
            `The Arbeit database at ${path} is at schema version ${current} and needs upgrading to ${latest}, but it cannot be written (${readOnly}).`,
            { details: { path, database_version: current, supported_version: latest } },
          );
        }
        await store.#writers.run(() => store.#immediate(async () => applyMigrations(driver)));
      }
      return store;
    } catch (error) {
      driver.close();
      rethrowAsStoreFailure(error, path);
    }
  }

  get driver(): SqlDriver {
    return this.#driver;
  }

  /**
   * A write inside another write joins it: that is how a tool call and its idempotency record
   * commit together. A write inside a read cannot be upgraded safely and is refused.
   */
  write<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    const open = this.#inTransaction.getStore();
    if (open === "write") return fn(this.#tx);
    if (open === "read") return Promise.reject(new Error("A write cannot start inside a read transaction."));
    if (this.readOnly !== undefined) {
      return Promise.reject(
        new ArbeitError(
          "STORE_READ_ONLY",
          `The Arbeit database at ${this.location} cannot be written: ${this.readOnly}.`,
          {
            details: { path: this.location },
          },
        ),
      );
    }
    return this.#mutex.run(() =>
      this.#writers.run(() => this.#inTransaction.run("write", () => this.#immediate(() => fn(this.#tx)))),
    );
  }

  transaction<T>(mode: "read" | "write", fn: (db: SqlDb) => Promise<T>): Promise<T> {
    return mode === "write" ? this.write(() => fn(this.#db)) : this.read(() => fn(this.#db));
  }

  read<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    if (this.#inTransaction.getStore() !== undefined) return fn(this.#tx);
    return this.#mutex.run(() =>
      this.#inTransaction.run("read", async () => {
        this.#assertOpen();
        try {
          this.#driver.exec("BEGIN");
        } catch (error) {
          rethrowAsStoreFailure(error, this.location);
        }
        this.#now = this.#clock().toISOString();
        let result: T;
        try {
          result = await fn(this.#tx);
        } catch (error) {
          // On a damaged file SQLite may have ended the transaction already.
          rollback(this.#driver);
          rethrowAsStoreFailure(error, this.location);
        }
        try {
          this.#driver.exec("COMMIT");
        } catch (error) {
          rethrowAsStoreFailure(error, this.location);
        }
        return result;
      }),
    );
  }

  /** Copies the database to a new file `destination`; safe while other processes write. */
  backup(destination: string): Promise<void> {
    return this.#mutex.run(async () => {
      this.#assertOpen();
      await this.#driver.backup(destination);
    });
  }

  async close(): Promise<void> {
    await this.#mutex.run(async () => {
      if (this.#closed) return;
      this.#closed = true;
      this.#driver.close();
    });
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error("The Arbeit store is closed.");
  }

  async #immediate<T>(fn: () => Promise<T>): Promise<T> {
    this.#assertOpen();
    await this.#begin();
    this.#now = this.#clock().toISOString();
    let result: T;
    try {
      result = await fn();
      this.#driver.exec("COMMIT");
    } catch (error) {
      rollback(this.#driver);
      rethrowAsStoreFailure(error, this.location);
    }
    return result;
  }

  /**
   * Takes the write lock. SQLite's own busy handler sleeps 1, 2, 5, 10, 15, 25… ms between tries,
   * which leaves a lock held for well under a millisecond idle while its waiters oversleep; so the
   * lock is tried with the handler off and short, jittered waits that grow to a few milliseconds.
   * The connection keeps busy_timeout for every other statement, and a writer still waits up to
   * BUSY_RETRY_BUDGET_MS in all before giving up.
   */
  async #begin(): Promise<void> {
    try {
      this.#driver.exec("BEGIN IMMEDIATE");
      return;
    } catch (error) {
      if (!isBusyError(error)) rethrowAsStoreFailure(error, this.location);
    }
    const started = Date.now();
    this.#driver.exec("PRAGMA busy_timeout = 0");
    try {
      for (let attempt = 0; ; attempt++) {
        pause(Math.min(0.05 * 1.5 ** attempt, 1) * (0.5 + Math.random()));
        try {
          this.#driver.exec("BEGIN IMMEDIATE");
          return;
        } catch (error) {
          if (!isBusyError(error)) throw error;
        }
        if (Date.now() - started > BUSY_RETRY_BUDGET_MS) {
          throw new ArbeitError(
            "STORE_UNAVAILABLE",
            `The database at ${this.location} stayed locked by other writers for over ${BUSY_RETRY_BUDGET_MS / 1000} s.`,
            {
              suggestions: ["Retry the call; check for a process holding a long transaction."],
              details: { path: this.location, cause: "locked" },
            },
          );
        }
        // Let the rest of this process run now and then while it waits.
        if (attempt % 16 === 15) await sleep(1);
      }
    } finally {
      this.#driver.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }
}

/** A failed COMMIT (disk full) may leave the transaction open, or SQLite may have ended it already. */
function rollback(driver: SqlDriver): void {
  try {
    driver.exec("ROLLBACK");
  } catch {
    // No transaction left to roll back.
  }
}

const SQLITE_HEADER = "SQLite format 3\0";

/**
 * A project's database file must be a database: an empty file (a crash while it was created, a
 * copy that failed) would otherwise become a new, empty store and hide what was lost.
 */
function checkDatabaseFile(path: string): void {
  let header: Buffer;
  try {
    const fd = openSync(path, "r");
    try {
      header = Buffer.alloc(16);
      header = header.subarray(0, readSync(fd, header, 0, 16, 0));
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    // A missing file is created as a new store, as a first open always does.
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    rethrowAsStoreFailure(error, path);
  }
  if (header.length === 0) {
    throw new ArbeitError(
      "STORE_DAMAGED",
      `The Arbeit database at ${path} is an empty file (0 bytes), not a database.`,
      {
        details: { path, cause: "empty_file" },
      },
    );
  }
  if (header.toString("latin1") !== SQLITE_HEADER) {
    throw new ArbeitError("STORE_DAMAGED", `The file at ${path} is not an SQLite database.`, {
      details: { path, cause: "not_a_database" },
    });
  }
}

/**
 * Opens the file for writing when it can be written, else for reading: a file on a read-only file
 * system (where the WAL's shared-memory file cannot be made, so only an immutable open reads it)
 * or one the user may read but not write.
 */
async function openWritableOrNot(path: string): Promise<{ driver: SqlDriver; readOnly: string | undefined }> {
  const blocker = path === ":memory:" || !existsSync(path) ? undefined : writeBlocker(path);
  if (blocker === undefined) return { driver: await openDriver(path), readOnly: undefined };
  let failure: unknown;
  for (const mode of [{ readonly: true }, { immutable: true }]) {
    try {
      const driver = await openDriver(path, mode);
      try {
        // Opening is lazy: reading the schema is the first real access to the file.
        driver.exec("PRAGMA schema_version");
      } catch (error) {
        driver.close();
        throw error;
      }
      return { driver, readOnly: blocker };
    } catch (error) {
      failure ??= error;
    }
  }
  throw failure;
}

/** Why the file cannot be written, in words: a read-only file system or missing permission. */
function writeBlocker(path: string): string | undefined {
  for (const target of [path, dirname(path)]) {
    try {
      accessSync(target, constants.W_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EROFS") return `${target} is on a read-only file system`;
      if (code === "EACCES" || code === "EPERM") return `no permission to write ${target}`;
    }
  }
  return undefined;
}

const pauseCell = new Int32Array(new SharedArrayBuffer(4));

/** Sleeps the thread for `ms` (fractions allowed): finer than a timer, and it yields the CPU. */
function pause(ms: number): void {
  Atomics.wait(pauseCell, 0, 0, ms);
}

/** An in-memory store: the SQLite store over ":memory:", handy for tests and scratch work. */
export const InMemoryTaskStore = {
  open: (options: SqliteStoreOptions = {}): Promise<SqliteTaskStore> => SqliteTaskStore.open(":memory:", options),
};
