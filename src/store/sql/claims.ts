import { DEFAULT_LEASE_SECONDS } from "../../domain/claims.js";
import type { Task } from "../../domain/types.js";
import { toTask } from "../rows.js";
import type { ExpiredClaim } from "../task-store.js";
import type { SqlDb } from "./database.js";
import { type Dialect, perDialect } from "./dialect.js";
import { plusLease } from "./reservations.js";
import { TASK_ORDER, taskColumns, UNFINISHED } from "./task-columns.js";

const SET = `UPDATE tasks SET owner = ?, claim_session = ?, lease_expires_at = ?, claim_lease_seconds = ?,
  claimed_at = COALESCE(?, claimed_at), version = version + 1, updated_at = ? WHERE id = ?`;
const CLEAR = `UPDATE tasks SET owner = NULL, claim_session = NULL, lease_expires_at = NULL, claim_lease_seconds = NULL,
  version = version + 1, updated_at = ? WHERE id = ?`;
// The lease alone, when an owner change ends it: recorded by that change's own event and version.
const DROP_LEASE =
  "UPDATE tasks SET claim_session = NULL, lease_expires_at = NULL, claim_lease_seconds = NULL WHERE id = ?";

const LEASE_SECONDS = "SELECT claim_lease_seconds FROM tasks WHERE id = ?";

// A live conversation's heartbeat: every claim the session holds runs until the given time, with
// the heartbeat's length as its own (so renewal by activity keeps to it), sooner or later than it
// would have. Not a change of the task: no version, no event.
const BEAT = `UPDATE tasks SET lease_expires_at = ?, claim_lease_seconds = ?
  WHERE claim_session = ? AND lease_expires_at > ? AND deleted_at IS NULL`;

const texts = perDialect((d) => ({
  // A renewal by activity runs the claim's own lease length (the default for a claim older than
  // that column) from now, forward only, of a lease the session still holds; it is not a change
  // of the task (no version, no event), so it never conflicts with expected_version.
  renew: `UPDATE tasks SET lease_expires_at = ${plusLease(d, "?", `COALESCE(claim_lease_seconds, ${DEFAULT_LEASE_SECONDS})`)}
    WHERE id = ? AND claim_session = ? AND lease_expires_at > ?
      AND lease_expires_at < ${plusLease(d, "?", `COALESCE(claim_lease_seconds, ${DEFAULT_LEASE_SECONDS})`)}`,
  expired: `SELECT id, owner, claim_session, lease_expires_at FROM tasks ${d.indexedBy("idx_tasks_lease")}
    WHERE deleted_at IS NULL AND owner IS NOT NULL AND lease_expires_at IS NOT NULL AND lease_expires_at <= ?
    ORDER BY lease_expires_at, id`,
  // Concurrent sweepers pass over the rows another one is freeing, so each lease expires once.
  expiredToFree: `SELECT id, owner, claim_session, lease_expires_at FROM tasks ${d.indexedBy("idx_tasks_lease")}
    WHERE deleted_at IS NULL AND owner IS NOT NULL AND lease_expires_at IS NOT NULL AND lease_expires_at <= ?
    ORDER BY lease_expires_at, id${d.forUpdate("tasks", { skipLocked: true })}`,
  // NULLS LAST spelled out: the engines disagree about where NULL sorts by default.
  claimsOf: `SELECT ${taskColumns(d)} FROM tasks t ${d.indexedBy("idx_tasks_claim_session")}
    WHERE t.deleted_at IS NULL AND t.claim_session = ? AND t.lease_expires_at > ?
    ORDER BY t.claimed_at DESC NULLS LAST, t.id`,
  // An owner without a live lease is an assignment (a lapsed claim leaves one too). An agent's
  // tasks are mostly held by its live sessions, so the read seeks the two unheld ranges of
  // idx_tasks_owner (owner, lease_expires_at), no lease and a lapsed one, instead of fetching
  // every task the agent owns. Each engine needs its own spelling for that. Postgres: the owner
  // is named only inside the two arms of the OR, so that its one plan for any parameters takes
  // them as two index scans (with `owner = ?` beside the OR it read every row of the owner and
  // filtered them). SQLite turns that OR into a range over every owner, so it takes the rows of
  // the two searches by rowid. Parameters: agent, agent, now, limit.
  assignedTo:
    d.name === "postgres"
      ? `SELECT ${taskColumns(d)} FROM tasks t
    WHERE t.deleted_at IS NULL AND t.owner IS NOT NULL AND t.status IN ${UNFINISHED}
      AND ((t.owner = ? AND t.lease_expires_at IS NULL) OR (t.owner = ? AND t.lease_expires_at <= ?))
    ORDER BY ${TASK_ORDER} LIMIT ?`
      : `SELECT ${taskColumns(d)} FROM tasks t
    WHERE t.rowid IN (
        SELECT rowid FROM tasks ${d.indexedBy("idx_tasks_owner")}
          WHERE deleted_at IS NULL AND owner = ? AND lease_expires_at IS NULL
        UNION ALL
        SELECT rowid FROM tasks ${d.indexedBy("idx_tasks_owner")}
          WHERE deleted_at IS NULL AND owner = ? AND lease_expires_at <= ?)
      AND t.status IN ${UNFINISHED}
    ORDER BY ${TASK_ORDER} LIMIT ?`,
}));

/** The read of an agent's unheld assignments, as sent. Exported for EXPLAIN (tests check its plan). */
export function assignedToSql(d: Dialect): string {
  return texts(d).assignedTo;
}

/** Claims: the session holding a task, its agent (`owner`), and the lease that keeps it. */
export function claimStatements(db: SqlDb) {
  const sql = texts(db.dialect);
  return {
    async setClaim(
      id: string,
      claim: {
        owner: string;
        session: string;
        lease_expires_at: string;
        lease_seconds: number;
        claimed_at: string | null;
      },
      at: string,
    ): Promise<void> {
      db.later(SET, claim.owner, claim.session, claim.lease_expires_at, claim.lease_seconds, claim.claimed_at, at, id);
    },

    async clearClaim(id: string, at: string): Promise<void> {
      db.later(CLEAR, at, id);
    },

    async dropLease(id: string): Promise<void> {
      db.later(DROP_LEASE, id);
    },

    renewLease(id: string, session: string, now: string): void {
      db.later(sql.renew, now, id, session, now, now);
    },

    /** A heartbeat of `session`: its live claims at `now` run until `until` (`seconds` from now); how many. */
    async beatClaims(session: string, now: string, until: string, seconds: number): Promise<number> {
      return db.run(BEAT, until, seconds, session, now);
    },

    /** The lease length the task's claim was taken with (null for a claim older than that record). */
    async claimLeaseSeconds(id: string): Promise<number | null> {
      const seconds = (await db.get(LEASE_SECONDS, id))?.claim_lease_seconds;
      return seconds === null || seconds === undefined ? null : Number(seconds);
    },

    /** Tasks whose lease ran out before `now` and still name an owner. */
    async expiredClaims(now: string): Promise<ExpiredClaim[]> {
      const text = db.writable ? sql.expiredToFree : sql.expired;
      return (await db.all(text, now)) as unknown as ExpiredClaim[];
    },

    /** Unfinished tasks assigned to `agent` that no session holds at `now`, best first. */
    async assignedTo(agent: string, now: string, limit: number): Promise<Task[]> {
      return (await db.all(sql.assignedTo, agent, agent, now, limit)).map(toTask);
    },

    /** The session's live claims, most recently claimed first. */
    async claimsOf(session: string, now: string): Promise<Task[]> {
      return (await db.all(sql.claimsOf, session, now)).map(toTask);
    },
  };
}
