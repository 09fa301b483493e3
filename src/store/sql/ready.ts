import type { Task } from "../../domain/types.js";
import { toTask } from "../rows.js";
import type { SqlDb, SqlValue } from "./database.js";
import { type Dialect, perDialect } from "./dialect.js";
import { openEdgeInto, TASK_ORDER, taskColumns } from "./task-columns.js";

/**
 * Ready work: open, live tasks with no open blocker and no live lease at `now`, best first. This
 * is the one read tuned per engine, so both forms stand here side by side.
 */
const texts = perDialect((d) => {
  const columns = taskColumns(d);
  const unblocked = `NOT ${openEdgeInto(d, "t")}`;
  const build = (byList: boolean, forUpdate: boolean) => {
    const list = byList ? "AND t.list_id = ?" : "";
    if (d.name === "sqlite") {
      // SQLite: two ordered sources merged (it merges a compound ORDER BY and stops at the LIMIT):
      // unleased open tasks in priority order, and the few whose lease has run out. Claimed tasks
      // are in neither index, so a busy project does not make every claim skip past all of them.
      return `SELECT ${columns} FROM tasks t ${d.indexedBy("idx_tasks_ready_free")}
         WHERE t.deleted_at IS NULL AND t.status = 'open' AND t.lease_expires_at IS NULL ${list} AND ${unblocked}
         UNION ALL
         SELECT ${columns} FROM tasks t ${d.indexedBy("idx_tasks_lease")}
         WHERE t.deleted_at IS NULL AND t.status = 'open' AND t.lease_expires_at IS NOT NULL
           AND t.lease_expires_at <= ? ${list} AND ${unblocked}
         ORDER BY priority, created_at, id LIMIT ? OFFSET ?`;
    }
    // Postgres: the same two sources, each its own ordered, limited scan (so the planner never
    // sorts every open task), taken as CTEs because a write transaction locks the rows it hands
    // out there and passes over rows another transaction holds (FOR UPDATE SKIP LOCKED), which
    // Postgres does not allow on a UNION. The projection then runs on those few rows only.
    const lock = forUpdate ? d.forUpdate("t", { skipLocked: true }) : "";
    return `WITH free AS (
         SELECT t.id FROM tasks t
         WHERE t.deleted_at IS NULL AND t.status = 'open' AND t.lease_expires_at IS NULL ${list} AND ${unblocked}
         ORDER BY ${TASK_ORDER} LIMIT ?${lock}),
       expired AS (
         SELECT t.id FROM tasks t
         WHERE t.deleted_at IS NULL AND t.status = 'open' AND t.lease_expires_at IS NOT NULL
           AND t.lease_expires_at <= ? ${list} AND ${unblocked}
         ORDER BY ${TASK_ORDER} LIMIT ?${lock})
       SELECT ${columns} FROM tasks t WHERE t.id IN (SELECT id FROM free UNION ALL SELECT id FROM expired)
       ORDER BY ${TASK_ORDER} LIMIT ? OFFSET ?`;
  };
  return {
    all: build(false, false),
    byList: build(true, false),
    allForUpdate: build(false, true),
    byListForUpdate: build(true, true),
  };
});

/** The SQL of the ready read (for EXPLAIN: the tests check its plan on a store without statistics). */
export function readySql(d: Dialect, options: { byList: boolean; forUpdate: boolean }): string {
  const sql = texts(d);
  if (options.forUpdate) return options.byList ? sql.byListForUpdate : sql.allForUpdate;
  return options.byList ? sql.byList : sql.all;
}

function params(d: Dialect, filter: { list_id?: string; now: string; limit: number; offset: number }): SqlValue[] {
  const list = filter.list_id === undefined ? [] : [filter.list_id];
  if (d.name === "sqlite") return [...list, filter.now, ...list, filter.limit, filter.offset];
  // Each source needs no more rows than the page reaches.
  const reach = filter.limit + filter.offset;
  return [...list, reach, filter.now, ...list, reach, filter.limit, filter.offset];
}

export function readyStatements(db: SqlDb) {
  const d = db.dialect;
  const sql = texts(d);
  return {
    async readyTasks(filter: { list_id?: string; now: string; limit: number; offset: number }): Promise<Task[]> {
      const byList = filter.list_id !== undefined;
      const text = db.writable ? (byList ? sql.byListForUpdate : sql.allForUpdate) : byList ? sql.byList : sql.all;
      return (await db.all(text, ...params(d, filter))).map(toTask);
    },
  };
}
