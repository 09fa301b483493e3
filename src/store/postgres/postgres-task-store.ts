/**
 * The shared store: Arbeit's task graph in a Postgres schema, for teams whose agents run on many
 * machines. Same contract, same results as the SQLite store.
 *
 *   const store = await PostgresTaskStore.open("postgres://arbeit@db.internal/work", { schema: "arbeit" });
 *   const arbeit = new ArbeitService(store, { projectRoot: process.cwd() });
 *
 * CLI and hosts select it with ARBEIT_DATABASE_URL (and ARBEIT_DATABASE_SCHEMA). Docs: docs/postgres.md.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Pool, PoolClient } from "pg";
import { ArbeitError } from "../../domain/errors.js";
import type { SqlDb, SqlStore } from "../sql/database.js";
import { postgresDialect } from "../sql/dialect.js";
import { sqlStoreTx } from "../sql/sql-tx.js";
import { rethrowAsStoreFailure } from "../store-errors.js";
import type { StoreTx, TaskStore } from "../task-store.js";
import {
  advisoryLock,
  checkSchemaName,
  DEFAULT_SCHEMA,
  describeLocation,
  eventOrderKey,
  isLockTimeout,
  isPostgresUrl,
  isTransientError,
  lockKey,
} from "./config.js";
import {
  applyPostgresMigrations,
  listPostgresMigrations,
  schemaFit,
  schemaFitCondition,
  schemaState,
} from "./migrate.js";
import { type Corkable, PostgresDb, type Queryable, type TxPart } from "./postgres-db.js";

/** How long a writer waits for a lock before giving up, as SQLite's busy retry budget. */
const LOCK_TIMEOUT = "60s";
/** How long to wait for a connection (a new one, or a free one from a busy pool). */
const CONNECT_TIMEOUT_MS = 30_000;
/** How many times a transaction rolled back by a deadlock or a lost race is re-run. */
const MAX_ATTEMPTS = 8;

/** Postgres's feature_not_supported, as it refuses a prepared statement whose result columns changed. */
const STALE_PLAN = "0A000";
const isStalePlan = (error: unknown) =>
  (error as { code?: unknown } | null)?.code === STALE_PLAN &&
  /cached plan must not change result type/.test(String((error as Error).message));

/** The type id of BIGINT (int8) in every Postgres. */
const INT8_OID = 20;

/**
 * How long a finished read's COMMIT waits for the connection's next transaction, which sends it
 * with its BEGIN: a process that ends sooner (a hook, a CLI call) sends none, and a connection left
 * idle holds its snapshot no longer than this.
 */
const READ_COMMIT_DELAY_MS = 200;

/** How long one estimate of the server's clock is trusted before a fresh sample replaces it. */
const CLOCK_SAMPLE_MS = 60_000;

/**
 * How far a fresh process's own clock may be from the server's for its first transaction to run
 * on it (see #guard); further off, that transaction runs again on the server's clock.
 */
const CLOCK_TOLERANCE_S = 1;

let latestVersion: number | undefined;
/** The schema version this code needs: its newest migration. */
const latest = () => (latestVersion ??= listPostgresMigrations().length);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface PostgresStoreOptions {
  /** The schema holding Arbeit's tables, created on first open. Default "arbeit". */
  schema?: string;
  /** Most connections this store opens at once. Default 10. */
  maxConnections?: number;
  /** How the connections show in pg_stat_activity. Default "arbeit". */
  applicationName?: string;
  /**
   * The time leases run on. Default: the server's, so that clients whose clocks disagree agree on
   * who holds a task. Tests substitute a settable clock.
   */
  clock?: () => Date;
  /**
   * When the schema's version is checked. "open" (the default): before open returns, migrating
   * it if needed. "first-transaction": with the first transaction, at no round trip of its own
   * (for a process that runs a call or two and ends); a schema that is not current then rolls
   * that transaction back, is checked (and migrated) as at open, and the transaction runs again.
   */
  checkSchema?: "open" | "first-transaction";
  /**
   * Whether opening may migrate a schema that is behind this code: the deliberate step of an
   * upgrade (`arbeit migrate`, `arbeit serve` at start). Without it such a schema is
   * SCHEMA_TOO_OLD and left as it is, so that a teammate's newer Arbeit never changes the store
   * under everyone else's. A fresh schema (none yet, or empty) is created either way.
   */
  migrate?: boolean;
  /**
   * When a read's COMMIT is sent. "at-once" (the default): as soon as its answer is in, not
   * waited for. "with-next-transaction": with the connection's next BEGIN, or after
   * READ_COMMIT_DELAY_MS idle; a process that ends first (a hook, a CLI call) sends none.
   */
  readCommit?: "at-once" | "with-next-transaction";
}

interface OpenTransaction {
  mode: "read" | "write";
  tx: StoreTx;
  db: PostgresDb;
  /** The part of the transaction running in this async context (StoreTx.finalWave). */
  part: TxPart;
}

/**
 * How concurrent writers stay correct. The service checks its rules inside a write transaction and
 * then writes; under READ COMMITTED two writers on different machines could both pass the same
 * check. Each kind of check is therefore made under the lock that protects it, and nothing more
 * is serialised:
 * - A rule on one task (its version, its claim, its status) is checked on the task's row read
 *   with FOR UPDATE (`lockTask`): writers to other tasks carry on, and claims of the best ready
 *   task pass over rows others hold (FOR UPDATE SKIP LOCKED).
 * - A rule across tasks (one parent, depth, no cycles, no deleting a parent) is checked under a
 *   transaction-scoped advisory lock of the schema (`lockGraph`), the one migrations take too.
 * - A rule of one session (its one live task, its request ids, its agent) is checked after the
 *   session's turn, an advisory lock keyed by the session that every write takes first
 *   (`lockSession`, src/store/sql/turns.ts).
 * - Event order: a writer takes a second advisory lock before its first event and holds it to
 *   COMMIT, so seq order is commit order and a reader's cursor can never pass an event that
 *   commits later with a lower seq. Only the tail of each write waits for it.
 * - Natural keys (a session link, a file touch, a memory key, a request id, one active task per
 *   session) have unique indexes; a writer that loses such a race is rolled back and run again,
 *   and then finds the winner's row.
 * Locks are released by COMMIT or ROLLBACK (or the connection dying). Deadlocks, which Postgres
 * resolves by rolling one side back, re-run the losing transaction. Reads run in parallel, each
 * on one REPEATABLE READ READ ONLY snapshot, and never wait for a writer.
 */
/**
 * One AsyncLocalStorage for every store, as in the SQLite store: each instance stays registered
 * with async_hooks for the life of the process and slows every await.
 */
const OPEN_TRANSACTION = new AsyncLocalStorage<OpenTransaction & { store: object }>();

export class PostgresTaskStore implements TaskStore, SqlStore {
  readonly location: string;
  readonly dialect = postgresDialect;
  readonly schema: string;
  readonly #pool: Pool;
  /** How many transactions were run again, by the Postgres error code that rolled them back. */
  readonly retries: Record<string, number> = {};
  readonly #graphLock: string;
  readonly #eventLock: string;
  readonly #writeBegin: string;
  readonly #readBegin: string;
  /** Opens the read-only transaction of reads issued after a write's early COMMIT (see PostgresDb). */
  readonly #followUpBegin: string;
  /** The transaction open in this async context on this store, if any: nested calls join it. */
  #openHere(): (OpenTransaction & { store: object }) | undefined {
    const open = OPEN_TRANSACTION.getStore();
    return open?.store === this ? open : undefined;
  }
  #closed = false;
  /**
   * Connections whose last transaction was a read that is not committed yet, with the timer that
   * commits it if no transaction comes first. A read-only transaction changes nothing, so
   * whether it ends by COMMIT, with the next BEGIN, or by the connection closing is all one.
   */
  readonly #openReads = new Map<PoolClient, NodeJS.Timeout>();

  readonly #clock: (() => Date) | undefined;
  /**
   * The server's clock as seen from here: server time minus local time when the question left.
   * Every answer comes after the server read its clock, so the smallest such difference is the
   * closest to the truth (it errs late by at most one network trip); a fresh sample replaces it
   * once a minute, so that a clock stepped on either side is followed.
   */
  #serverOffset: number;
  #offsetSampledAt: number;
  /** False until the clock has been sampled once: the first sample is taken whatever it says. */
  #offsetKnown: boolean;
  /** Whether the schema is known to be at this code's version (see checkSchema). */
  #schemaChecked: boolean;
  readonly #deferReadCommit: boolean;
  readonly #migrate: boolean;

  /** The connection pool's use now: connections open, idle, and callers waiting for one. */
  poolUse(): { max: number; total: number; idle: number; waiting: number } {
    const pool = this.#pool;
    return { max: pool.options.max ?? 10, total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
  }

  private constructor(
    pool: Pool,
    location: string,
    schema: string,
    clock: (() => Date) | undefined,
    serverOffset: number | undefined,
    deferReadCommit: boolean,
    migrate: boolean,
  ) {
    this.#deferReadCommit = deferReadCommit;
    this.#migrate = migrate;
    this.#pool = pool;
    this.#clock = clock;
    this.#serverOffset = serverOffset ?? 0;
    this.#offsetKnown = serverOffset !== undefined;
    this.#schemaChecked = serverOffset !== undefined;
    this.#offsetSampledAt = Date.now();
    this.location = location;
    this.schema = schema;
    this.#graphLock = advisoryLock(lockKey(schema));
    this.#eventLock = advisoryLock(eventOrderKey(schema));
    // Sent as one message with BEGIN, so they cost no round trip of their own. Transaction-scoped
    // (SET LOCAL), so nothing is left on a connection a pooler such as PgBouncer hands on.
    // Generic plans: each statement is planned once per connection, not at every execution. Left
    // to choose, Postgres planned the ready read and most of a resume's reads afresh on each call
    // (a LIMIT or an owner given as a parameter makes a generic plan look dearer than it runs),
    // which cost more than running them: 1-4 ms of a 7 ms `ready`. Every statement here is
    // written to keep its plan whatever its parameters (indexes chosen by the statement's shape;
    // test/store/postgres-store.test.ts checks the plans that matter under generic planning).
    // No JIT: it compiles a statement afresh at every execution whose estimated cost passes a
    // threshold, which a generic plan's cost (its LIMIT unknown) passes easily: 20-25 ms of
    // compiling for a listing that runs in 2 ms.
    // No parallel workers: a generic plan's row estimates (a range of a parameter's values taken
    // as a third of the table) can make a parallel plan look cheaper, and starting its workers
    // costs far more than the statements here run: 40-55 ms on the bench's machine for a ready
    // read that runs in 1 ms.
    const settings = `SET LOCAL search_path TO "${schema}"; SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'; SET LOCAL plan_cache_mode = force_generic_plan; SET LOCAL jit = off; SET LOCAL max_parallel_workers_per_gather = 0`;
    this.#writeBegin = `BEGIN; ${settings}`;
    this.#readBegin = `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; ${settings}`;
    this.#followUpBegin = `BEGIN READ ONLY; ${settings}`;
  }

  /**
   * What opens a transaction, in one message (no round trip of its own): the COMMIT of the
   * connection's last read if still open, BEGIN and its settings, the guard while the schema is
   * unchecked, and the database's time, which keeps the estimate of its clock current.
   */
  #begin(mode: "read" | "write", now: string, commitFirst: boolean): string {
    const parts = commitFirst ? ["COMMIT"] : [];
    parts.push(mode === "write" ? this.#writeBegin : this.#readBegin);
    if (!this.#schemaChecked) parts.push(this.#guard(now));
    parts.push(`SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS now`);
    return parts.join("; ");
  }

  /**
   * The statement that stands in for the schema check in a transaction sent before the check's
   * answer could come: it fails, aborting the transaction before anything in it commits, unless
   * the schema is Arbeit's at this code's version and (unless a clock was given) `now`, the time
   * the transaction runs on, is within CLOCK_TOLERANCE_S of the server's. `now` is made here
   * (an ISO time), never user text.
   */
  #guard(now: string): string {
    const clock = this.#clock
      ? ""
      : ` AND abs(extract(epoch FROM now() - '${now}'::timestamptz)) < ${CLOCK_TOLERANCE_S}`;
    return `SELECT 1 / (CASE WHEN ${schemaFitCondition(latest())}${clock} THEN 1 ELSE 0 END) AS current`;
  }

  /** The schema check of open, made when a transaction's guard failed: migrates if needed, samples the clock. */
  async #checkSchema(): Promise<void> {
    const client = await connect(this.#pool, this.location);
    try {
      const openRead = this.#openReads.get(client);
      if (openRead !== undefined) {
        clearTimeout(openRead);
        this.#openReads.delete(client);
        await client.query("COMMIT");
      }
      const asked = Date.now();
      const state = await schemaState(client as unknown as Queryable, this.schema);
      this.#offsetKnown = false;
      this.#sampleServerClock(state.serverTime, asked);
      if (schemaFit(state, latest()) !== "current")
        await applyPostgresMigrations(client as unknown as Queryable, this.schema, this.#graphLock, undefined, {
          upgrade: this.#migrate,
        });
      this.#schemaChecked = true;
    } finally {
      client.release();
    }
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
      // Statements sent together travel together: see #transaction.
      pipeline: true,
      // BIGINT columns (version, seq, rowid) come back as numbers, as SQLite's do: none of them
      // comes near 2^53, and every layer above compares and prints them as numbers.
      types: {
        getTypeParser: ((oid: number, format?: "text" | "binary") =>
          oid === INT8_OID && format !== "binary" ? Number : pg.types.getTypeParser(oid, format)) as never,
      },
    });
    // A connection that dies (server restart) must never crash the process: idle ones are dropped
    // from the pool, and a checked-out one fails its next query, which the transaction handles.
    pool.on("error", () => {});
    pool.on("connect", (client) => client.on("error", () => {}));
    let serverOffset: number | undefined;
    try {
      const client = await connect(pool, location);
      try {
        if (options.checkSchema !== "first-transaction") {
          // One statement when the schema is current: its version, and the server's clock.
          const asked = Date.now();
          const state = await schemaState(client as unknown as Queryable, schema);
          serverOffset = Date.parse(state.serverTime) - asked;
          if (schemaFit(state, latest()) !== "current") {
            await applyPostgresMigrations(
              client as unknown as Queryable,
              schema,
              advisoryLock(lockKey(schema)),
              undefined,
              {
                upgrade: options.migrate === true,
              },
            );
          }
        }
      } finally {
        client.release();
      }
    } catch (error) {
      await pool.end();
      rethrowAsStoreFailure(error, location);
    }
    return new PostgresTaskStore(
      pool,
      location,
      schema,
      options.clock,
      serverOffset,
      options.readCommit === "with-next-transaction",
      options.migrate === true,
    );
  }

  #commitLater(client: PoolClient): void {
    const timer = setTimeout(() => {
      if (this.#openReads.get(client) !== timer) return;
      this.#openReads.delete(client);
      (client.query("COMMIT") as unknown as Promise<unknown>).catch(() => {});
    }, READ_COMMIT_DELAY_MS);
    timer.unref();
    this.#openReads.set(client, timer);
  }

  /** The server's time now, as estimated from its answers (see #serverOffset). */
  #serverNow(): string {
    return new Date(Date.now() + this.#serverOffset).toISOString();
  }

  #sampleServerClock(serverTime: string, asked: number): void {
    const offset = Date.parse(serverTime) - asked;
    if (Number.isNaN(offset)) return;
    if (!this.#offsetKnown || offset < this.#serverOffset || asked - this.#offsetSampledAt > CLOCK_SAMPLE_MS) {
      this.#serverOffset = offset;
      this.#offsetSampledAt = asked;
      this.#offsetKnown = true;
    }
  }

  /**
   * A write inside another write joins it: that is how a tool call and its idempotency record
   * commit together. A write inside a read cannot be upgraded safely and is refused.
   */
  write<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    const open = this.#openHere();
    if (open?.mode === "write") return joined(open, () => fn(open.tx));
    if (open?.mode === "read") return Promise.reject(new Error("A write cannot start inside a read transaction."));
    return this.#transaction("write", fn);
  }

  read<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    const open = this.#openHere();
    if (open !== undefined) return joined(open, () => fn(open.tx));
    return this.#transaction("read", (tx) => fn(tx));
  }

  transaction<T>(mode: "read" | "write", fn: (db: SqlDb) => Promise<T>): Promise<T> {
    const open = this.#openHere();
    if (open !== undefined) {
      if (mode === "write" && open.mode === "read") {
        return Promise.reject(new Error("A write cannot start inside a read transaction."));
      }
      return joined(open, () => fn(open.db));
    }
    return this.#transaction(mode, (_tx, db) => fn(db));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const timer of this.#openReads.values()) clearTimeout(timer);
    this.#openReads.clear();
    // Waits for connections still in a transaction to be released.
    await this.#pool.end();
  }

  /**
   * Runs `fn` in one transaction on one pooled connection. The connection pipelines: BEGIN goes
   * out with the transaction's first statement, statements sent together travel together, a
   * read's COMMIT goes out without being waited for, and a write's COMMIT travels with the writes
   * whose answers no one waits for (SqlDb.later). The transaction's time is the server's clock
   * as estimated from its answers, so nothing waits for BEGIN's answer.
   *
   * A serialization failure or deadlock (which Postgres resolves by rolling one side back) re-runs
   * the whole transaction with backoff, so callers never see one; so does a pooled connection
   * found dead before anything ran on it (after a server restart). Everything else rolls back and
   * is rethrown.
   */
  async #transaction<T>(mode: "read" | "write", fn: (tx: StoreTx, db: SqlDb) => Promise<T>): Promise<T> {
    let stalePlans = 0;
    for (let attempt = 1; ; attempt++) {
      if (this.#closed) throw new Error("The Arbeit store is closed.");
      const client = await connect(this.#pool, this.location);
      const openRead = this.#openReads.get(client);
      if (openRead !== undefined) {
        clearTimeout(openRead);
        this.#openReads.delete(client);
      }
      let broken: Error | undefined;
      let begun = false;
      let guardFailed = false;
      let released = false;
      let begin: Promise<void> = Promise.resolve();
      const now = this.#clock ? this.#clock().toISOString() : this.#serverNow();
      const guarded = !this.#schemaChecked;
      // BEGIN leaves with the transaction's first statement (PostgresDb calls this as it sends it).
      const open = () => {
        const asked = Date.now();
        begin = (
          client.query(this.#begin(mode, now, openRead !== undefined)) as unknown as Promise<
            Array<{ rows: Array<{ now: string }> }>
          >
        ).then(
          (answers) => {
            begun = true;
            if (guarded) this.#schemaChecked = true;
            this.#sampleServerClock(answers.at(-1)!.rows[0]!.now, asked);
          },
          (error: unknown) => {
            guardFailed = guarded;
            throw error;
          },
        );
        begin.catch(() => {});
      };
      const socket = (client as unknown as { connection?: { stream?: Corkable } }).connection?.stream;
      const db = new PostgresDb(client as unknown as Queryable, mode === "write", open, socket, this.#followUpBegin);
      try {
        const tx = sqlStoreTx(db, () => now, {
          lockGraph: async () => void (await db.run(this.#graphLock)),
          orderEvents: this.#eventLock,
          finalWave: () => this.#openHere()?.part.final(),
        });
        const part = db.part();
        const result = await OPEN_TRANSACTION.run({ store: this, mode, tx, db, part }, () => ended(fn(tx, db), part));
        if (mode === "read") {
          // A guarded read's answer counts only once the guard passed (its answer came first).
          if (guarded) await begin;
          // Nothing was written: the answer is final, and the next user of the connection queues
          // behind the COMMIT; or it goes with the connection's next BEGIN (see readCommit). A
          // read that sent nothing leaves the connection as it found it.
          if (!db.opened) {
            if (openRead !== undefined) this.#commitLater(client);
          } else if (this.#deferReadCommit) this.#commitLater(client);
          else (client.query("COMMIT") as unknown as Promise<unknown>).catch(() => {});
        } else {
          // BEGIN's answer came long ago, or comes in the same round trip as the COMMIT's.
          await Promise.all([begin, db.commit()]);
          if (!db.opened && openRead !== undefined) this.#commitLater(client);
          // Reads made after a COMMIT sent with the final wave: their read-only transaction ends as a read's.
          if (db.followingUp) {
            if (this.#deferReadCommit) this.#commitLater(client);
            else (client.query("COMMIT") as unknown as Promise<unknown>).catch(() => {});
          }
        }
        return result;
      } catch (thrown) {
        // A write sent without waiting that failed is the cause; what followed it only saw the
        // aborted transaction.
        const error = (await db.laterError()) ?? thrown;
        await begin.catch(() => {});
        broken = await rollback(client);
        if (guardFailed && broken === undefined) {
          // Not Arbeit's schema at this version, or this machine's clock too far off: checked
          // (and migrated) as at open, then the transaction runs again.
          client.release();
          released = true;
          try {
            await this.#checkSchema();
          } catch (checkError) {
            rethrowAsStoreFailure(checkError, this.location);
          }
          continue;
        }
        if (isStalePlan(error) && stalePlans++ <= this.#pool.options.max) {
          // A migration (a later release's expand) changed the columns of a table a statement
          // prepared on this connection reads whole: Postgres refuses that statement here for good.
          // The connection goes, and the transaction runs again on another, which prepares it anew;
          // at most once per pooled connection.
          broken ??= error as Error;
          this.retries[STALE_PLAN] = (this.retries[STALE_PLAN] ?? 0) + 1;
          attempt--;
          continue;
        }
        const retry = isTransientError(error) || (!begun && broken !== undefined);
        if (retry && attempt < MAX_ATTEMPTS) {
          const code = String((error as { code?: unknown }).code ?? "connection");
          this.retries[code] = (this.retries[code] ?? 0) + 1;
          await sleep(Math.min(5 + 2 ** attempt * Math.random() * 5, 500));
          continue;
        }
        if (isLockTimeout(error)) {
          throw new ArbeitError(
            "STORE_UNAVAILABLE",
            `A write to the Arbeit store at ${this.location} waited over ${LOCK_TIMEOUT} for another writer's lock.`,
            {
              suggestions: ["Retry the call; check for a session holding a long transaction on this schema."],
              details: { path: this.location, cause: "lock_timeout" },
            },
          );
        }
        rethrowAsStoreFailure(error, this.location);
      } finally {
        db.finish();
        if (!released) client.release(broken);
      }
    }
  }
}

/**
 * Runs `fn`, a call that joins the open transaction, as a part of it of its own: the
 * transaction's COMMIT does not leave with a final wave while the part runs, unless it says that
 * its own final wave is issued (StoreTx.finalWave).
 */
function joined<T>(open: OpenTransaction & { store: object }, fn: () => Promise<T>): Promise<T> {
  const part = open.db.part();
  try {
    return ended(OPEN_TRANSACTION.run({ ...open, part }, fn), part);
  } catch (error) {
    part.end(true);
    throw error;
  }
}

/** `running`, ending `part` as it settles (PostgresDb.part). */
function ended<T>(running: Promise<T>, part: TxPart): Promise<T> {
  return running.then(
    (result) => {
      part.end();
      return result;
    },
    (error: unknown) => {
      part.end(true);
      throw error;
    },
  );
}

async function connect(pool: Pool, location: string): Promise<PoolClient> {
  try {
    return await pool.connect();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const code = (error as { code?: unknown }).code;
    throw new ArbeitError("STORE_UNAVAILABLE", `Could not connect to Postgres at ${location}: ${reason}`, {
      suggestions: ["Check ARBEIT_DATABASE_URL and that the Postgres server is running and reachable."],
      details: { path: location, ...(typeof code === "string" ? { cause: code } : {}) },
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
