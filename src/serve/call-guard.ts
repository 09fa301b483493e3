import { ArbeitService } from "../service/arbeit-service.js";
import type { SqlDb, SqlStore } from "../store/sql/database.js";
import type { StoreTx, TaskStore } from "../store/task-store.js";

/**
 * A check under way: its verdict, and whether it is asserted, that is made by statements that
 * abort the transaction they run in unless it passes (as `SELECT 1 / 0` does on Postgres). An
 * asserted check needs no wait before the transaction commits: a COMMIT sent before its answer
 * commits nothing when it fails. Where an aborted statement does not abort the transaction
 * (SQLite), nothing commits before the transaction's function returns, which is after the verdict.
 */
export interface Check {
  verdict: Promise<void>;
  asserted: boolean;
}

/**
 * What one request's call must pass before its answer counts or anything it wrote commits: its
 * token still active, the sessions it acts in its own. The check is made inside the first
 * transaction the call opens, beside the call's own first statements (on Postgres they travel in
 * the same round trip), so it costs the call no transaction and no wait of its own, and sees the
 * same snapshot as the call. The transaction waits for the verdict before it returns or commits
 * (unless the check is asserted, see Check): a refusal is thrown there, so that transaction writes
 * nothing, and again by every later transaction of the call; the call's answer is then the refusal.
 */
export class CallGuard {
  #passed = false;
  #refusal: unknown;
  /** The check under way, if one is: a transaction nested in (or beside) the one making it waits for its verdict. */
  #checking: Promise<void> | undefined;

  /** `check`'s verdict throws the refusal; it runs inside the open transaction, at its database time `now`. */
  constructor(private readonly check: (now: string) => Check) {}

  /** Checks once (again only after an error that was no verdict, such as a lost connection). */
  async pass(now: string): Promise<void> {
    if (this.#passed) return;
    if (this.#refusal !== undefined) throw this.#refusal;
    await (this.#checking ?? this.#start(now).checking);
  }

  /** Starts the check: its verdict, once passed or refused here, and whether it is asserted (see Check). */
  #start(now: string): { checking: Promise<void>; asserted: boolean } {
    let check: Check;
    try {
      check = this.check(now);
    } catch (error) {
      check = { verdict: Promise.reject(error), asserted: false };
    }
    const checking: Promise<void> = check.verdict.then(
      () => {
        this.#passed = true;
        this.#checking = undefined;
      },
      (error: unknown) => {
        if (this.#checking === checking) this.#checking = undefined;
        if (error instanceof Refused) this.#refusal = error.refusal;
        throw error instanceof Refused ? error.refusal : error;
      },
    );
    this.#checking = checking;
    return { checking, asserted: check.asserted };
  }

  /**
   * Runs `fn` (a transaction's work) with the check made beside it: the check's statements are
   * sent first, so that `fn`'s first ones join them, and its verdict is awaited before `fn`'s
   * answer is returned. A refusal wins over whatever `fn` answered or threw. `passed` is called
   * once the check has passed (at once if it had), and only then; or, when this transaction made
   * an asserted check (see Check), as soon as the check's statements are sent.
   */
  async beside<T>(now: string, fn: () => Promise<T>, passed: () => void = () => {}): Promise<T> {
    if (this.#passed) {
      passed();
      return fn();
    }
    if (this.#refusal !== undefined) throw this.#refusal;
    const own = this.#checking === undefined;
    // A check another transaction made is asserted in that one only: this one waits for its verdict.
    const { checking, asserted } = this.#checking ? { checking: this.#checking, asserted: false } : this.#start(now);
    if (asserted) passed();
    else checking.then(passed, () => {});
    const verdict = checking.then(
      () => undefined,
      (error: unknown) => ({ error }),
    );
    let result: T;
    try {
      result = await fn();
    } catch (error) {
      // A check that failed for want of a verdict (the transaction aborted by `fn`'s own failure)
      // says nothing: `fn`'s error is the cause, and decides whether the transaction runs again.
      await verdict;
      if (this.#refusal !== undefined) throw this.#refusal;
      throw error;
    }
    const failed = await verdict;
    if (this.#refusal !== undefined) throw this.#refusal;
    if (failed !== undefined) {
      if (own) throw failed.error;
      // Another transaction's check found no verdict: this one checks on its own.
      await this.pass(now);
    }
    return result;
  }

  /** Whether a transaction made the check (passed or refused). */
  get checked(): boolean {
    return this.#passed || this.#refusal !== undefined;
  }

  /** The refusal the check found, if any. */
  get refusal(): unknown {
    return this.#refusal;
  }
}

/** Thrown by a guard's check: its verdict, as opposed to a failure to reach one. */
export class Refused extends Error {
  constructor(readonly refusal: unknown) {
    super("refused");
  }
}

type Store = TaskStore & SqlStore;

/**
 * `store` with `guard` checked beside every transaction opened at the top of the call until it
 * has passed (nested ones join the open transaction, and wait for its check's verdict). The
 * call's work runs as a part of the transaction of its own, and the check's part says its final
 * wave is issued only once the check has passed (StoreTx.finalWave), or once its statements are
 * sent when they assert it: a COMMIT that leaves with the call's final wave never leaves before
 * the verdict unless the verdict aborts the transaction itself, so a refused call writes nothing.
 */
function guardedStore(store: Store, guard: CallGuard): Store {
  const timeNow = () => store.read(async (tx) => tx.databaseNow());
  return {
    location: store.location,
    dialect: store.dialect,
    get readOnly() {
      return store.readOnly;
    },
    close: () => store.close(),
    read: <T>(fn: (tx: StoreTx) => Promise<T>) =>
      store.read((tx) =>
        guard.beside(
          tx.databaseNow(),
          () => store.read(fn),
          () => tx.finalWave(),
        ),
      ),
    write: <T>(fn: (tx: StoreTx) => Promise<T>) =>
      store.write((tx) =>
        guard.beside(
          tx.databaseNow(),
          () => store.write(fn),
          () => tx.finalWave(),
        ),
      ),
    transaction: <T>(mode: "read" | "write", fn: (db: SqlDb) => Promise<T>) =>
      store.transaction(mode, async (db) => guard.beside(await timeNow(), () => fn(db))),
  };
}

/** The service's operations for one guarded call: every transaction it opens answers only once `guard` passed. */
export function guardedService(service: ArbeitService, guard: CallGuard): ArbeitService {
  return new ArbeitService(guardedStore(service.store as Store, guard), { projectRoot: service.projectRoot });
}
