import type { SqlDb } from "./database.js";
import { perDialect } from "./dialect.js";

/**
 * What writers take turns at, each an advisory-lock class ("ARBS", "ARBM"); the key is a hash of
 * the schema and the subject, so that unrelated schemas on one server never wait for each other.
 * Two subjects that happen to share a hash only take turns, never conflict.
 */
const CLASSES = {
  /** A session: its one live task, its request ids, the agent it belongs to. */
  session: 0x41524253,
  /** A memory scope: how many entries it holds. */
  memoryScope: 0x4152424d,
} as const;

const texts = perDialect((d) =>
  d.name === "postgres"
    ? Object.fromEntries(
        Object.entries(CLASSES).map(([kind, key]) => [
          kind,
          `SELECT pg_advisory_xact_lock(${key}, hashtext(current_schema() || '/' || ?))`,
        ]),
      )
    : null,
);

/**
 * Makes this write transaction wait its turn among the writers that take one at `subject`, until
 * it ends: what it reads afterwards includes every write an earlier turn committed, and no other
 * writer's turn can slip between that check and this transaction's write. Under Postgres' READ
 * COMMITTED each statement reads what was committed when it began, so the statements issued after
 * the lock see the result of the turn before. Sent without waiting, it travels with the
 * transaction's next statements (no round trip of its own); a lock that cannot be had in time
 * fails the transaction. SQLite's writer already runs alone, and a read changes nothing: neither
 * takes a turn.
 */
export function takeTurn(db: SqlDb, kind: keyof typeof CLASSES, subject: string): void {
  const sql = texts(db.dialect)?.[kind];
  if (sql !== undefined && db.writable) void db.later(sql, subject);
}

/** The session's turn (StoreTx.lockSession). */
export function lockSession(db: SqlDb, session: string): void {
  takeTurn(db, "session", session);
}
