import { AsyncLocalStorage } from "node:async_hooks";
import { accessSync, constants, existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { ArbeitError } from "../../domain/errors.js";
import { Mutex, mutexForFile } from "../mutex.js";
import type { SqlDb, SqlStore } from "../sql/database.js";
import { sqliteDialect } from "../sql/dialect.js";
import { sqlStoreTx } from "../sql/sql-tx.js";
import { rethrowAsStoreFailure } from "../store-errors.js";
import type { StoreTx, TaskStore } from "../task-store.js";
import {
  checkDatabaseFile,
  createOwnerOnlyFile,
  databaseFileAt,
  type FileIdentity,
  sameFile,
} from "./database-file.js";
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
  #db: SqlDb;
  #driver: SqlDriver;
  #tx: StoreTx;
  /** The file opened (undefined for ":memory:"), to notice it deleted or replaced. */
  #identity: FileIdentity | undefined;
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
  readOnly: string | undefined;

  private constructor(opened: OpenedFile, location: string, clock: () => Date) {
    this.location = location;
    this.#clock = clock;
    this.#writers = location === ":memory:" ? new Mutex() : mutexForFile(resolve(location));
    this.#driver = opened.driver;
    this.#identity = opened.identity;
    this.readOnly = opened.readOnly;
    this.#db = new SqliteDb(opened.driver);
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
    const opened = await openConfigured(path);
    const { driver, readOnly } = opened;
    try {
      const store = new SqliteTaskStore(opened, path, options.clock ?? (() => new Date()));
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

  /**
   * The file at this store's path must still be the one it opened. Deleted (the project's
   * `.arbeit/` removed): NOT_INITIALIZED, since whatever was written would vanish with the
   * unlinked file. Replaced (removed and initialised again): the new file is opened in its place,
   * so this process writes where every new process does. Checked as each transaction begins: a
   * stat, far cheaper than the transaction itself.
   */
  async #followFile(): Promise<void> {
    if (this.#identity === undefined) return;
    const now = databaseFileAt(this.location);
    if (now === undefined) {
      throw new ArbeitError(
        "NOT_INITIALIZED",
        `The Arbeit database at ${this.location} was deleted after this process opened it; nothing was written.`,
        {
          suggestions: [
            "Restore the project's .arbeit/ folder (from an `arbeit backup` copy, say); this process opens the database found there at its next call.",
          ],
          details: { path: this.location, cause: "deleted" },
        },
      );
    }
    if (sameFile(now, this.#identity)) return;
    const opened = await openConfigured(this.location);
    const current = schemaVersion(opened.driver);
    const latest = listMigrations().length;
    if (current !== latest) {
      opened.driver.close();
      throw new ArbeitError(
        "STORE_UNAVAILABLE",
        `The Arbeit database at ${this.location} was replaced by one at schema version ${current} (this process knows ${latest}); nothing was written.`,
        {
          suggestions: ["Restart this process (arbeit mcp, arbeit ui, the host) so that it opens the new database."],
          details: { path: this.location, cause: "replaced", database_version: current, supported_version: latest },
        },
      );
    }
    const old = this.#driver;
    this.#use(opened);
    try {
      old.close();
    } catch {
      // The old file is gone from the project; nothing of it is needed any more.
    }
  }

  #use(opened: OpenedFile): void {
    this.#driver = opened.driver;
    this.#identity = opened.identity;
    this.readOnly = opened.readOnly;
    this.#db = new SqliteDb(opened.driver);
    this.#tx = sqlStoreTx(this.#db, () => this.#now);
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
        await this.#followFile();
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
    await this.#followFile();
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

/**
 * Opens the file for writing when it can be written, else for reading: a file on a read-only file
 * system (where the WAL's shared-memory file cannot be made, so only an immutable open reads it)
 * or one the user may read but not write.
 */
interface OpenedFile {
  driver: SqlDriver;
  readOnly: string | undefined;
  identity: FileIdentity | undefined;
}

/** Opens `path` and sets the connection up as every store of ours runs. */
async function openConfigured(path: string): Promise<OpenedFile> {
  const memory = path === ":memory:";
  if (!memory) databaseFileAt(path);
  const { driver, readOnly } = await openWritableOrNot(path).catch((error) => rethrowAsStoreFailure(error, path));
  try {
    driver.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    if (!memory && !readOnly) enableWal(driver);
    driver.exec("PRAGMA synchronous = NORMAL");
    // Checkpoint every ~40 MB of WAL rather than SQLite's ~4 MB: agents' writes keep dirtying
    // the same hot pages (the head of the ready index, the tail of the event log), and a longer
    // interval copies each of them into the database once instead of over and over. The WAL
    // file grows to that size between checkpoints.
    driver.exec(`PRAGMA wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
    driver.exec("PRAGMA foreign_keys = ON");
    return { driver, readOnly, identity: memory ? undefined : databaseFileAt(path) };
  } catch (error) {
    driver.close();
    rethrowAsStoreFailure(error, path);
  }
}

/**
 * Switching a new database to WAL needs it to itself. Behind another process's long transaction
 * (its migration of the same fresh file, say) each try waits busy_timeout; the open keeps trying,
 * as a writer does, for BUSY_RETRY_BUDGET_MS in all.
 */
function enableWal(driver: SqlDriver): void {
  const started = Date.now();
  for (;;) {
    try {
      driver.exec("PRAGMA journal_mode = WAL");
      return;
    } catch (error) {
      if (!isBusyError(error) || Date.now() - started > BUSY_RETRY_BUDGET_MS) throw error;
    }
  }
}

async function openWritableOrNot(path: string): Promise<{ driver: SqlDriver; readOnly: string | undefined }> {
  if (path !== ":memory:" && !existsSync(path)) {
    createOwnerOnlyFile(path);
    return { driver: await openDriver(path), readOnly: undefined };
  }
  const blocker = path === ":memory:" ? undefined : writeBlocker(path);
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
