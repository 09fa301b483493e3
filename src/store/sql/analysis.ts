import type { Task } from "../../domain/types.js";
import { toTask } from "../rows.js";
import type { SqlDb, SqlValue } from "./database.js";
import { type Dialect, perDialect } from "./dialect.js";
import { OPEN_INTO, openBlockerOf, openEdgeInto, TASK_ORDER, taskColumns, UNFINISHED } from "./task-columns.js";

interface Scope {
  list_id?: string;
  /** Only the descendants of this task. */
  under?: string;
}

/**
 * Every descendant of the `?` task. The walk drives each step (outerJoin): left to choose, SQLite
 * at times built an index over every parent_of edge at each step, for each of 200,000 tasks.
 */
const underRoot = (d: Dialect) => `WITH RECURSIVE under_root(id) AS (
  SELECT to_task_id FROM relationships WHERE from_task_id = ? AND type = 'parent_of' AND removed_at IS NULL
  UNION SELECT r.to_task_id FROM under_root u ${d.outerJoin} relationships r ON r.from_task_id = u.id
    WHERE r.type = 'parent_of' AND r.removed_at IS NULL) `;

/** The scope's clause over tasks aliased `alias`, its parameters, and the CTE it needs. */
function scoped(d: Dialect, filter: Scope, alias: string): { clause: string; params: SqlValue[]; cte: string } {
  const parts: string[] = [];
  const params: SqlValue[] = [];
  if (filter.under !== undefined) parts.push(`${alias}.id IN (SELECT id FROM under_root)`);
  if (filter.list_id !== undefined) {
    parts.push(`${alias}.list_id = ?`);
    params.push(filter.list_id);
  }
  return {
    clause: parts.map((p) => `AND ${p}`).join(" "),
    params,
    cte: filter.under !== undefined ? underRoot(d) : "",
  };
}

const texts = perDialect((d) => {
  const openEdges = `relationships r ${d.indexedBy("idx_relationships_open_blocks")}`;
  const open = `${OPEN_INTO} AND ${openBlockerOf(d, "r")}`;
  const ends = "JOIN tasks f ON f.id = r.from_task_id JOIN tasks t ON t.id = r.to_task_id";
  const inList = "AND f.list_id = ? AND t.list_id = ?";
  // Under a parent: the walk's tasks lead to the edges into them, and the far end is looked up
  // in the walk. Matching both ends against the walk with IN let SQLite loop over the whole walk
  // for every edge it read: hours for a tree of 200,000 tasks.
  const under = (list: string) => `${underRoot(d)}SELECT r.from_task_id AS a, r.to_task_id AS b
    FROM under_root u ${d.outerJoin} ${openEdges} ON r.to_task_id = u.id ${list ? ends : ""}
    WHERE ${open} AND EXISTS (SELECT 1 FROM under_root s WHERE s.id = r.from_task_id) ${list}`;
  return {
    allEdges: `SELECT r.from_task_id AS a, r.to_task_id AS b FROM ${openEdges} WHERE ${open}`,
    edgesInList: `SELECT r.from_task_id AS a, r.to_task_id AS b FROM ${openEdges} ${ends} WHERE ${open} ${inList}`,
    edgesUnder: under(""),
    edgesUnderInList: under(inList),
    // Whole store: unfinished tasks less those an open edge points into, two index-only counts
    // rather than a probe per task.
    unfinished: `SELECT COUNT(*) AS n FROM tasks ${d.indexedBy("idx_tasks_list_status")}
      WHERE deleted_at IS NULL AND status IN ${UNFINISHED}`,
    blockedCount: `SELECT COUNT(DISTINCT r.to_task_id) AS n FROM ${openEdges} WHERE ${open}`,
  };
});

/** Reads for graph analysis (critical path, parallel groups, bottlenecks). */
export function analysisStatements(db: SqlDb) {
  const d = db.dialect;
  const sql = texts(d);
  return {
    /** Live blocks edges between unfinished tasks, optionally within a list or under a parent. */
    async blockEdges(filter: Scope): Promise<Array<[string, string]>> {
      const list = filter.list_id === undefined ? [] : [filter.list_id, filter.list_id];
      // Each row is already the pair (from, to): tens of thousands of them, read as arrays.
      const rows =
        filter.under !== undefined
          ? db.tuples(list.length > 0 ? sql.edgesUnderInList : sql.edgesUnder, filter.under, ...list)
          : list.length > 0
            ? db.tuples(sql.edgesInList, ...list)
            : db.tuples(sql.allEdges);
      return (await rows) as Array<[string, string]>;
    },

    /**
     * How many unfinished tasks in scope have no unfinished blocker, and the best of them to start
     * now (open, unclaimed and without unfinished children, as ready has them, in ready order).
     */
    async unblockedUnfinished(
      filter: Scope & { limit: number; blocked?: Promise<number> },
    ): Promise<{ total: number; tasks: Task[] }> {
      const scope = scoped(d, filter, "t");
      const head: SqlValue[] = filter.under !== undefined ? [filter.under] : [];
      // The count and the rows are asked together (one round trip on Postgres).
      const rowsRead = db.all(
        `${scope.cte}SELECT ${taskColumns(d)} FROM tasks t ${d.indexedBy("idx_tasks_ready_leaves")}
         WHERE t.deleted_at IS NULL AND t.status = 'open' AND t.lease_expires_at IS NULL AND t.open_children = 0 AND t.open_blockers = 0 ${scope.clause}
           AND NOT ${openEdgeInto(d, "t")}
         ORDER BY ${TASK_ORDER} LIMIT ?`,
        ...head,
        ...scope.params,
        filter.limit,
      );
      rowsRead.catch(() => {});
      let total: number;
      if (filter.list_id === undefined && filter.under === undefined) {
        const unfinished = db.get(sql.unfinished);
        // The tasks an open edge points into: the caller's count when it read the edges anyway
        // (the same edges, so the same count) rather than reading every edge again.
        const blocked = filter.blocked ?? db.get(sql.blockedCount).then((row) => Number(row?.n ?? 0));
        blocked.catch(() => {});
        total = Number((await unfinished)?.n ?? 0) - (await blocked);
      } else {
        const row = await db.get(
          `${scope.cte}SELECT COUNT(*) AS n FROM tasks t
           WHERE t.deleted_at IS NULL AND t.status IN ${UNFINISHED} ${scope.clause} AND NOT ${openEdgeInto(d, "t")}`,
          ...head,
          ...scope.params,
        );
        total = Number(row?.n ?? 0);
      }
      return { total, tasks: (await rowsRead).map(toTask) };
    },

    async assessedUnfinished(filter: Scope): Promise<Task[]> {
      const scope = scoped(d, filter, "t");
      const head: SqlValue[] = filter.under !== undefined ? [filter.under] : [];
      const rows = await db.all(
        `${scope.cte}SELECT ${taskColumns(d)} FROM tasks t ${d.indexedBy("idx_tasks_assessed")}
         WHERE t.deleted_at IS NULL AND (t.risk IS NOT NULL OR t.impact IS NOT NULL)
           AND t.status IN ${UNFINISHED} ${scope.clause}
         ORDER BY ${TASK_ORDER}`,
        ...head,
        ...scope.params,
      );
      return rows.map(toTask);
    },
  };
}
