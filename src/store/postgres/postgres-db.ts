import type { RawRow } from "../rows.js";
import type { SqlDb, SqlValue } from "../sql/database.js";
import { postgresDialect } from "../sql/dialect.js";

/** The one thing the query layer needs from a pg client: run a (named, prepared) query. */
export interface Queryable {
  query(
    config: string | { name?: string; text: string; values?: unknown[]; rowMode?: "array" },
    values?: unknown[],
  ): Promise<{ rows: RawRow[]; rowCount: number | null; command?: string }>;
}

/** What the connection's socket offers to batch writes (a net.Socket or tls.TLSSocket). */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

/**
 * A part of a write transaction: the function it runs, or a call that joined it (StoreTx.finalWave).
 * `final` when the part has issued every write it makes and its last reads; `end` when its
 * function has settled, `failed` when it threw.
 */
export interface TxPart {
  final(): void;
  end(failed?: boolean): void;
}

const prepared = new Map<string, { name: string; text: string }>();

/**
 * The statement for a SQL text with `?` placeholders: numbered for Postgres ($1, $2, ...) and
 * named, so that each connection prepares it once and then only binds and executes it. No
 * statement of the store holds a `?` anywhere else (no string literal, no jsonb `?` operator).
 */
export function preparedStatement(sql: string): { name: string; text: string } {
  let statement = prepared.get(sql);
  if (statement === undefined) {
    let n = 0;
    statement = { name: `arbeit_${prepared.size + 1}`, text: sql.replace(/\?/g, () => `$${++n}`) };
    prepared.set(sql, statement);
  }
  return statement;
}

/**
 * The query layer's database over one pooled (pipelining) Postgres connection inside one
 * transaction: statements issued before an answer is awaited go out together.
 *
 * Statements go out in waves. A statement issued before any answer of the statements in flight
 * has come joins them; one issued after some have come is held until the last of them has, and
 * then goes out with everything else held. Postgres answers a connection's statements in order,
 * so holding costs only the time the server takes for the rest of the wave, and a transaction
 * whose reads run side by side (a hook's news beside its records) costs one round trip per wave,
 * not one per answer that happened to arrive first.
 */
export class PostgresDb implements SqlDb {
  readonly dialect = postgresDialect;
  readonly writable: boolean;
  readonly #client: Queryable;

  /** Sends the transaction's BEGIN; called as its first statement is sent, so that both leave together. */
  readonly #open: () => void;
  #opened = false;

  /** The connection's socket, when known: corked while a wave is being issued (see #send). */
  readonly #socket: Corkable | undefined;
  #corked = false;

  /** What opens the read-only transaction that reads issued after an early COMMIT run in. */
  readonly #followUpBegin: string | undefined;

  constructor(
    client: Queryable,
    writable: boolean,
    open: () => void = () => {},
    socket?: Corkable,
    followUpBegin?: string,
  ) {
    this.#client = client;
    this.writable = writable;
    this.#open = open;
    this.#socket = socket;
    this.#followUpBegin = followUpBegin;
  }

  /**
   * The driver writes each protocol message of a statement (bind, describe, execute, sync) to the
   * socket on its own: a system call each, the most CPU a busy service spent per call. Corked
   * from a wave's first statement until the code issuing it yields (after the microtasks queued
   * now have run), the wave leaves in one write. It leaves no later than it would have: nothing
   * could have been answered before then.
   */
  #cork(): void {
    const socket = this.#socket;
    if (socket === undefined || this.#corked) return;
    this.#corked = true;
    socket.cork();
    process.nextTick(() => {
      this.#corked = false;
      socket.uncork();
    });
  }

  /** Whether BEGIN has been sent: a transaction that ran no statement has nothing to commit. */
  get opened(): boolean {
    return this.#opened;
  }

  /** Answers awaited of the wave in flight, and whether one of them has come. */
  #inFlight = 0;
  #someAnswered = false;
  #held: Array<() => void> = [];
  #finished = false;

  #send<T>(start: () => Promise<T>): Promise<T> {
    if (this.#finished) return Promise.reject(new Error("The transaction has ended."));
    if (this.#inFlight > 0 && this.#someAnswered)
      return new Promise<T>((resolve, reject) => this.#held.push(() => this.#send(start).then(resolve, reject)));
    this.#cork();
    if (!this.#opened) {
      this.#opened = true;
      this.#open();
    }
    this.#inFlight++;
    const sent = start();
    const answered = () => {
      this.#inFlight--;
      this.#someAnswered = true;
      if (this.#inFlight > 0) return;
      this.#someAnswered = false;
      const held = this.#held;
      this.#held = [];
      for (const send of held) send();
    };
    sent.then(answered, answered);
    return sent;
  }

  /** The first statement that failed before the COMMIT left: what a COMMIT that rolled back reports. */
  #failure: unknown;

  #query(sql: string, params: SqlValue[], write = false, rowMode?: "array") {
    if (this.#commitSent !== undefined && !this.#finished) {
      // A write after the COMMIT would commit on its own: refused. A read runs in a read-only
      // transaction of its own, with the store's settings, on its own snapshot (as each statement
      // of a read-committed transaction does).
      if (write || this.#followUpBegin === undefined)
        return Promise.reject(new Error("The transaction committed with its final wave: no write may follow."));
      if (!this.#followingUp) {
        this.#followingUp = true;
        const begin = this.#followUpBegin;
        this.#send(() => this.#client.query(begin)).catch(() => {});
      }
    }
    const { name, text } = preparedStatement(sql);
    const sent = this.#send(() =>
      this.#client.query({ name, text, values: params as unknown[], ...(rowMode ? { rowMode } : {}) }),
    );
    if (this.#commitSent === undefined)
      sent.catch((error: unknown) => {
        this.#failure ??= error;
      });
    return sent;
  }

  /** The parts of the transaction still running, each with whether it said its final wave is issued. */
  readonly #parts = new Set<{ final: boolean }>();
  #commitSoon = false;
  #partFailed = false;
  /** The COMMIT, once sent: with the final wave (see part), or by commit. */
  #commitSent: Promise<{ command?: string }> | undefined;
  /** Whether a read issued after the COMMIT opened a read-only transaction, which the caller ends. */
  #followingUp = false;

  /**
   * Registers a part of the transaction. Once every running part has said its final wave is issued
   * (and at least one still runs, so the transaction's own function has not settled), the COMMIT
   * leaves behind that wave: when the code issuing it yields, after the microtasks queued now
   * have run, so that a part that joins meanwhile (started by an answer of the same wave) counts.
   */
  part(): TxPart {
    const part = { final: false };
    this.#parts.add(part);
    return {
      final: () => {
        part.final = true;
        this.#commitWithWave();
      },
      end: (failed = false) => {
        // A part that threw may have written half of what it meant to: whoever catches its error
        // decides, so the COMMIT no longer leaves with a final wave (only by commit, if at all).
        if (failed) this.#partFailed = true;
        if (this.#parts.delete(part)) this.#commitWithWave();
      },
    };
  }

  #commitWithWave(): void {
    if (!this.writable || this.#partFailed || this.#commitSoon || this.#commitSent !== undefined) return;
    this.#commitSoon = true;
    process.nextTick(() => {
      this.#commitSoon = false;
      if (this.#commitSent !== undefined || this.#finished || !this.#opened || this.#partFailed) return;
      if (this.#parts.size === 0) return;
      for (const part of this.#parts) if (!part.final) return;
      this.#sendCommit();
    });
  }

  #sendCommit(): Promise<{ command?: string }> {
    const sent = this.#send(() => this.#client.query("COMMIT"));
    sent.catch(() => {});
    this.#commitSent = sent;
    return sent;
  }

  /** Whether reads issued after an early COMMIT left a read-only transaction open, for the caller to end. */
  get followingUp(): boolean {
    return this.#followingUp;
  }

  /**
   * The transaction is over (committed or rolled back): a statement still held is refused, and
   * so is every later one, so that none reaches the connection's next transaction.
   */
  finish(): void {
    this.#finished = true;
    const held = this.#held;
    this.#held = [];
    for (const send of held) send();
  }

  async all(sql: string, ...params: SqlValue[]): Promise<RawRow[]> {
    return (await this.#query(sql, params)).rows;
  }

  async get(sql: string, ...params: SqlValue[]): Promise<RawRow | undefined> {
    return (await this.#query(sql, params)).rows[0];
  }

  async tuples(sql: string, ...params: SqlValue[]): Promise<unknown[][]> {
    return (await this.#query(sql, params, false, "array")).rows as unknown as unknown[][];
  }

  async run(sql: string, ...params: SqlValue[]): Promise<number> {
    return (await this.#query(sql, params, true)).rowCount ?? 0;
  }

  /** Writes whose answers no one waits for: checked at COMMIT, which travels with them. */
  readonly #later: Array<Promise<unknown>> = [];
  #laterError: unknown;

  later(sql: string, ...params: SqlValue[]): Promise<RawRow | undefined> {
    const sent = this.#query(sql, params, true).then(
      (answer) => answer.rows[0],
      (error: unknown) => {
        this.#laterError ??= error;
        return undefined;
      },
    );
    this.#later.push(sent);
    return sent;
  }

  /**
   * Commits: COMMIT goes out behind the writes sent with `later`, in the same round trip, unless it
   * left already with the final wave. A failed write aborted the transaction (whose COMMIT then
   * only rolls back): its error is thrown, and so is the first failed statement's when the COMMIT
   * rolled back for any other reason (a failure its caller caught).
   */
  async commit(): Promise<void> {
    if (!this.#opened) return;
    const committed = this.#commitSent ?? this.#sendCommit();
    await Promise.all(this.#later);
    if (this.#laterError !== undefined) throw this.#laterError;
    const answer = await committed;
    if (answer.command === "ROLLBACK")
      throw this.#failure ?? new Error("The transaction was rolled back: a statement in it failed.");
  }

  /** The error of a write sent with `later`, once every such write has answered. */
  async laterError(): Promise<unknown> {
    await Promise.all(this.#later);
    return this.#laterError;
  }
}
