import type { StoreTx } from "../task-store.js";
import { analysisStatements } from "./analysis.js";
import { claimStatements } from "./claims.js";
import { contextStatements } from "./context.js";
import type { SqlDb } from "./database.js";
import { eventStatements } from "./events.js";
import { hierarchyStatements } from "./hierarchy.js";
import { idempotencyStatements } from "./idempotency.js";
import { memoryStatements } from "./memory.js";
import { missionStatements } from "./mission.js";
import { overviewStatements } from "./overview.js";
import { progressStatements } from "./progress.js";
import { readyStatements } from "./ready.js";
import { relationshipStatements } from "./relationships.js";
import { reservationStatements } from "./reservations.js";
import { sessionStateStatements } from "./session-state.js";
import { taskStatements } from "./tasks.js";
import { lockSession } from "./turns.js";
import { workStatements } from "./work.js";

export interface TxLocks {
  /** Takes the lock that graph-checking writers share (see StoreTx.lockGraph). */
  lockGraph(): Promise<void>;
  /**
   * A statement taking the lock a writer holds from its first event to its commit, so that event
   * seq order is commit order: a reader that has seen seq n has seen every event below n, and
   * cursors never skip one committed late. Run as part of the first event's insert.
   */
  orderEvents?: string;
  /** See StoreTx.finalWave: where statements run as they are issued, there is nothing to do. */
  finalWave?: () => void;
}

/** Where every writer already runs alone (SQLite's BEGIN IMMEDIATE), there is nothing more to take. */
const ALREADY_SERIAL: TxLocks = { lockGraph: () => Promise.resolve() };

/**
 * The store contract over one database connection: every statement module, on either engine.
 * `databaseNow` is the database's time as the transaction began.
 */
export function sqlStoreTx(db: SqlDb, databaseNow: () => string, locks: TxLocks = ALREADY_SERIAL): StoreTx {
  const events = eventStatements(db);
  let ordered = false;
  return {
    databaseNow,
    batchesStatements: db.dialect.name === "postgres",
    lockGraph: locks.lockGraph,
    lockSession: (session) => lockSession(db, session),
    finalWave: locks.finalWave ?? (() => {}),
    ...taskStatements(db),
    ...readyStatements(db),
    ...hierarchyStatements(db),
    ...relationshipStatements(db),
    ...contextStatements(db),
    ...progressStatements(db),
    ...workStatements(db),
    ...claimStatements(db),
    ...reservationStatements(db),
    ...idempotencyStatements(db),
    ...sessionStateStatements(db),
    ...memoryStatements(db),
    ...events,
    appendEvent(event) {
      const lock = ordered ? undefined : locks.orderEvents;
      ordered = true;
      return events.appendEvent(event, lock);
    },
    recordEvent(event) {
      const lock = ordered ? undefined : locks.orderEvents;
      ordered = true;
      return events.recordEvent(event, lock);
    },
    ...analysisStatements(db),
    ...overviewStatements(db),
    ...missionStatements(db),
  };
}
