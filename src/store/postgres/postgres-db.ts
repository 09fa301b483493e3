import type { RawRow } from "../rows.js";
import type { SqlDb, SqlValue } from "../sql/database.js";
import { postgresDialect } from "../sql/dialect.js";

/** The one thing the query layer needs from a pg client: run a (named, prepared) query. */
export interface Queryable {
  query(
    config: string | { name?: string; text: string; values?: unknown[] },
    values?: unknown[],
  ): Promise<{ rows: RawRow[]; rowCount: number | null }>;
}

/** What the connection's socket offers to batch writes (a net.Socket or tls.TLSSocket). */
export interface Corkable {
  cork(): void;
  uncork(): void;
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

  constructor(client: Queryable, writable: boolean, open: () => void = () => {}, socket?: Corkable) {
    this.#client = client;
    this.writable = writable;
    this.#open = open;
    this.#socket = socket;
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

  #query(sql: string, params: SqlValue[]) {
    const { name, text } = preparedStatement(sql);
    return this.#send(() => this.#client.query({ name, text, values: params as unknown[] }));
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

  async run(sql: string, ...params: SqlValue[]): Promise<number> {
    return (await this.#query(sql, params)).rowCount ?? 0;
  }

  /** Writes whose answers no one waits for: checked at COMMIT, which travels with them. */
  readonly #later: Array<Promise<unknown>> = [];
  #laterError: unknown;

  later(sql: string, ...params: SqlValue[]): Promise<RawRow | undefined> {
    const sent = this.#query(sql, params).then(
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
   * Commits: COMMIT goes out behind the writes sent with `later`, in the same round trip. A
   * failed one aborted the transaction (whose COMMIT then only rolls back): its error is thrown.
   */
  async commit(): Promise<void> {
    if (!this.#opened) return;
    const committed = this.#send(() => this.#client.query("COMMIT"));
    committed.catch(() => {});
    await Promise.all(this.#later);
    if (this.#laterError !== undefined) throw this.#laterError;
    await committed;
  }

  /** The error of a write sent with `later`, once every such write has answered. */
  async laterError(): Promise<unknown> {
    await Promise.all(this.#later);
    return this.#laterError;
  }
}
