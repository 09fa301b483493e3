/**
 * The shared store: Arbeit's task graph in a Postgres schema, for teams whose agents run on many
 * machines (DESIGN §6). Same contract, same results as the SQLite store.
 *
 *   const store = await PostgresTaskStore.open("postgres://arbeit@db.internal/work", { schema: "arbeit" });
 *   const arbeit = new ArbeitService(store, { projectRoot: process.cwd() });
 *
 * CLI and hosts select it with ARBEIT_DATABASE_URL (and ARBEIT_DATABASE_SCHEMA). Docs: docs/postgres.md.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Pool, PoolClient } from "pg";
import { ArbeitError } from "../../domain/errors.js";
import { Mutex } from "../mutex.js";
import type { StoreTx, TaskStore } from "../task-store.js";
import {
  checkSchemaName,
  DEFAULT_SCHEMA,
  describeLocation,
  isLockTimeout,
  isPostgresUrl,
  isTransientError,
  lockKey,
} from "./config.js";
import { applyPostgresMigrations } from "./migrate.js";
import { PgAgentTx } from "./pg-agent-tx.js";
import type { Queryable } from "./sql.js";

/** How long a writer waits for the write lock before giving up, as SQLite's busy retry budget. */
const LOCK_TIMEOUT = "60s";
/** How long to wait for a connection (a new one, or a free one from a busy pool). */
const CONNECT_TIMEOUT_MS = 30_000;
/** How many times a transaction rolled back by a serialization failure or deadlock is re-run. */
const MAX_ATTEMPTS = 8;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface PostgresStoreOptions {
  /** The schema holding Arbeit's tables, created on first open. Default "arbeit". */
  schema?: string;
  /** Most connections this store opens at once. Default 10. */
  maxConnections?: number;
  /** How the connections show in pg_stat_activity. Default "arbeit". */
  applicationName?: string;
}

interface OpenTransaction {
  mode: "read" | "write";
  tx: PgAgentTx;
}

/**
 * How concurrent writers stay correct. The service checks its invariants (no cycle, one parent,
 * depth, a claim held by nobody else, expected_version) inside a write transaction and then
 * writes. Under READ COMMITTED two writers on different machines could both pass the same check.
 * So every write transaction first takes a transaction-scoped advisory lock on a key of its
 * schema (pg_advisory_xact_lock): writes to one schema run one at a time, exactly like SQLite's
 * BEGIN IMMEDIATE, and the lock is released by COMMIT or ROLLBACK (or the connection dying).
 * The transaction stays READ COMMITTED on purpose: each statement after the lock sees every write
 * committed before it, whereas a REPEATABLE READ snapshot could predate the lock wait.
 * Serialising writers also makes event seq order commit order, so event cursors never skip.
 * Reads run in parallel, each on one REPEATABLE READ READ ONLY snapshot, and never wait for a writer.
 */
/**
 * One AsyncLocalStorage for every store, as in the SQLite store: each instance stays registered
 * with async_hooks for the life of the process and slows every await.
 */
const OPEN_TRANSACTION = new AsyncLocalStorage<OpenTransaction & { store: object }>();

export class PostgresTaskStore implements TaskStore {
  readonly location: string;
  readonly schema: string;
  readonly #pool: Pool;
  readonly #writeBegin: string;
  readonly #readBegin: string;
  /** Writers of this process queue here rather than each holding a connection while they wait. */
  readonly #writers = new Mutex();
  /** The transaction open in this async context on this store, if any: nested calls join it. */
  #openHere(): OpenTransaction | undefined {
    const open = OPEN_TRANSACTION.getStore();
    return open?.store === this ? open : undefined;
  }
  #closed = false;

  private constructor(pool: Pool, location: string, schema: string) {
    this.#pool = pool;
    this.location = location;
    this.schema = schema;
    const path = `SET LOCAL search_path TO "${schema}"`;
    this.#writeBegin = `BEGIN; ${path}; ${lockStatement(schema)}`;
    this.#readBegin = `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; ${path}`;
  }

  /** Connects to `url`, creates the schema if needed and migrates it to the newest version. */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresTaskStore> {
    if (!isPostgresUrl(url)) {
      throw new ArbeitError("INVALID_ARGUMENT", "The Postgres store needs a postgres:// or postgresql:// URL.");
    }
    const schema = checkSchemaName(options.schema ?? DEFAULT_SCHEMA);
    const location = describeLocation(url, schema);
    // Loaded on demand: SQLite users never load the pg driver.
    const { default: pg } = await import("pg");
    const pool = new pg.Pool({
      connectionString: url,
      max: options.maxConnections ?? 10,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      application_name: options.applicationName ?? "arbeit",
    });
    // A connection that dies (server restart) must never crash the process: idle ones are dropped
    // from the pool, and a checked-out one fails its next query, which the transaction handles.
    pool.on("error", () => {});
    pool.on("connect", (client) => client.on("error", () => {}));
    try {
      const client = await connect(pool, location);
      try {
        await applyPostgresMigrations(client as unknown as Queryable, schema, lockStatement(schema));
      } finally {
        client.release();
      }
    } catch (error) {
      await pool.end();
      throw error;
    }
    return new PostgresTaskStore(pool, location, schema);
  }

  /**
   * A write inside another write joins it: that is how a tool call and its idempotency record
   * commit together. A write inside a read cannot be upgraded safely and is refused.
   */
  write<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    const open = this.#openHere();
    if (open?.mode === "write") return fn(open.tx);
    if (open?.mode === "read") return Promise.reject(new Error("A write cannot start inside a read transaction."));
    return this.#writers.run(() => this.#transaction("write", fn));
  }

  read<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    const open = this.#openHere();
    if (open !== undefined) return fn(open.tx);
    return this.#transaction("read", fn);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // Waits for connections still in a transaction to be released.
    await this.#pool.end();
  }

  /**
   * Runs `fn` in one transaction on one pooled connection. A serialization failure or deadlock
   * (which Postgres resolves by rolling one side back) re-runs the whole transaction with backoff,
   * so callers never see one; so does a pooled connection found dead before anything ran on it
   * (after a server restart). Everything else rolls back and is rethrown.
   */
  async #transaction<T>(mode: "read" | "write", fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      if (this.#closed) throw new Error("The Arbeit store is closed.");
      const client = await connect(this.#pool, this.location);
      let broken: Error | undefined;
      let begun = false;
      try {
        await client.query(mode === "write" ? this.#writeBegin : this.#readBegin);
        begun = true;
        const tx = new PgAgentTx(client as unknown as Queryable, mode === "write");
        const result = await OPEN_TRANSACTION.run({ store: this, mode, tx }, () => fn(tx));
        await client.query("COMMIT");
        return result;
      } catch (error) {
        broken = await rollback(client);
        const retry = isTransientError(error) || (!begun && broken !== undefined);
        if (retry && attempt < MAX_ATTEMPTS) {
          await sleep(Math.min(5 + 2 ** attempt * Math.random() * 5, 500));
          continue;
        }
        if (isLockTimeout(error)) {
          throw new ArbeitError(
            "INTERNAL_ERROR",
            `The Arbeit store at ${this.location} stayed locked by another writer for over ${LOCK_TIMEOUT}.`,
            { suggestions: ["Retry the call; check for a session holding a long transaction on this schema."] },
          );
        }
        throw error;
      } finally {
        client.release(broken);
      }
    }
  }
}

function lockStatement(schema: string): string {
  const [space, key] = lockKey(schema);
  return `SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'; SELECT pg_advisory_xact_lock(${space}, ${key})`;
}

async function connect(pool: Pool, location: string): Promise<PoolClient> {
  try {
    return await pool.connect();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ArbeitError("INTERNAL_ERROR", `Could not connect to Postgres at ${location}: ${reason}`, {
      suggestions: ["Check ARBEIT_DATABASE_URL and that the Postgres server is running and reachable."],
    });
  }
}

/** Rolls back; returns the error when the connection itself is broken, so the pool drops it. */
async function rollback(client: PoolClient): Promise<Error | undefined> {
  try {
    await client.query("ROLLBACK");
    return undefined;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
