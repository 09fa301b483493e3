import { ArbeitService } from "../service/arbeit-service.js";
import type { SqlDb, SqlStore } from "../store/sql/database.js";
import type { StoreTx, TaskStore } from "../store/task-store.js";

/**
 * What one request's call must pass before it may read or write anything: its token still active,
 * the sessions it acts in its own. The check is made once, inside the first transaction the call
 * opens, so it costs the call no transaction (no round trips to Postgres) of its own, and sees the
 * same snapshot as the call. A refusal is thrown there, so that transaction writes nothing, and
 * again by every later transaction of the call; the call's answer is then the refusal.
 */
export class CallGuard {
  #passed = false;
  #refusal: unknown;

  /** `check` throws the refusal; it runs inside the open transaction, at its database time `now`. */
  constructor(private readonly check: (now: string) => Promise<void>) {}

  /** Checks once (again only after an error that was no verdict, such as a lost connection). */
  async pass(now: string): Promise<void> {
    if (this.#passed) return;
    if (this.#refusal !== undefined) throw this.#refusal;
    try {
      await this.check(now);
      this.#passed = true;
    } catch (error) {
      if (error instanceof Refused) this.#refusal = error.refusal;
      throw error instanceof Refused ? error.refusal : error;
    }
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
 * `store` with `guard` passed at the start of every transaction opened at the top of the call
 * (nested ones join the open transaction, which has passed it).
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
      store.read(async (tx) => {
        await guard.pass(tx.databaseNow());
        return fn(tx);
      }),
    write: <T>(fn: (tx: StoreTx) => Promise<T>) =>
      store.write(async (tx) => {
        await guard.pass(tx.databaseNow());
        return fn(tx);
      }),
    transaction: <T>(mode: "read" | "write", fn: (db: SqlDb) => Promise<T>) =>
      store.transaction(mode, async (db) => {
        await guard.pass(await timeNow());
        return fn(db);
      }),
  };
}

/** The service's operations for one guarded call: every transaction it opens passes `guard` first. */
export function guardedService(service: ArbeitService, guard: CallGuard): ArbeitService {
  return new ArbeitService(guardedStore(service.store as Store, guard), { projectRoot: service.projectRoot });
}
