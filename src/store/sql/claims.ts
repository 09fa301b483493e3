import type { Task } from "../../domain/types.js";
import { toTask } from "../rows.js";
import type { SqlDb } from "./database.js";
import { perDialect } from "./dialect.js";
import { taskColumns } from "./task-columns.js";

const SET = `UPDATE tasks SET owner = ?, lease_expires_at = ?, claimed_at = COALESCE(?, claimed_at),
  version = version + 1, updated_at = ? WHERE id = ?`;
const CLEAR =
  "UPDATE tasks SET owner = NULL, lease_expires_at = NULL, version = version + 1, updated_at = ? WHERE id = ?";

const texts = perDialect((d) => ({
  expired: `SELECT id, owner, lease_expires_at FROM tasks ${d.indexedBy("idx_tasks_lease")}
    WHERE deleted_at IS NULL AND owner IS NOT NULL AND lease_expires_at IS NOT NULL AND lease_expires_at <= ?
    ORDER BY lease_expires_at, id`,
  // Concurrent sweepers pass over the rows another one is freeing, so each lease expires once.
  expiredToFree: `SELECT id, owner, lease_expires_at FROM tasks ${d.indexedBy("idx_tasks_lease")}
    WHERE deleted_at IS NULL AND owner IS NOT NULL AND lease_expires_at IS NOT NULL AND lease_expires_at <= ?
    ORDER BY lease_expires_at, id${d.forUpdate("tasks", { skipLocked: true })}`,
  // NULLS LAST spelled out: the engines disagree about where NULL sorts by default.
  claimsOf: `SELECT ${taskColumns(d)} FROM tasks t
    WHERE t.deleted_at IS NULL AND t.owner = ? AND t.lease_expires_at > ?
    ORDER BY t.claimed_at DESC NULLS LAST, t.id`,
}));

/** Claims: a task's owner and the lease that keeps it. */
export function claimStatements(db: SqlDb) {
  const sql = texts(db.dialect);
  return {
    async setClaim(
      id: string,
      claim: { owner: string; lease_expires_at: string; claimed_at: string | null },
      at: string,
    ): Promise<void> {
      await db.run(SET, claim.owner, claim.lease_expires_at, claim.claimed_at, at, id);
    },

    async clearClaim(id: string, at: string): Promise<void> {
      await db.run(CLEAR, at, id);
    },

    /** Tasks whose lease ran out before `now` and still name an owner. */
    async expiredClaims(now: string): Promise<Array<{ id: string; owner: string; lease_expires_at: string }>> {
      const text = db.writable ? sql.expiredToFree : sql.expired;
      return (await db.all(text, now)) as Array<{ id: string; owner: string; lease_expires_at: string }>;
    },

    /** The agent's live claims, most recently claimed first. */
    async claimsOf(agent: string, now: string): Promise<Task[]> {
      return (await db.all(sql.claimsOf, agent, now)).map(toTask);
    },
  };
}
