import type { Task } from "../../domain/types.js";
import { toTask } from "../rows.js";
import type { ReadyFilter } from "../task-store.js";
import type { SqlDb, SqlValue } from "./database.js";
import { type Dialect, perDialect } from "./dialect.js";
import { metadataConditions } from "./metadata-filter.js";
import { storedFilesColumn, storedFilesOf } from "./reservations.js";
import { AFTER_TASK_KEY, openEdgeInto, TASK_ORDER, taskColumns } from "./task-columns.js";

/**
 * Ready work: open, live tasks with no open blocker and no unfinished child (a parent's work is
 * its children), best first, that the caller may take: no live lease but its own session's, and
 * no owner but its own agent (an owner without a live lease is an assignment). A write (claiming the best ready task) takes only tasks nobody holds.
 * This is the one read tuned per engine, so both forms stand here side by side.
 */
const texts = perDialect((d) => {
  const unblocked = `NOT ${openEdgeInto(d, "t")}`;
  const open = "t.deleted_at IS NULL AND t.status = 'open'";
  // withFiles: each task with the files stored for it (see storedFilesColumn), for planning.
  // metadata: the conditions of a metadata filter, which every source applies with the list's.
  const build = (byList: boolean, forUpdate: boolean, after = false, withFiles = false, metadata: string[] = []) => {
    const columns = withFiles ? `${taskColumns(d)}, ${storedFilesColumn(d, "t")}` : taskColumns(d);
    // A later page starts after the last task of the one before, in each source alike.
    const list = `${byList ? "AND t.list_id = ?" : ""}${after ? ` AND ${AFTER_TASK_KEY}` : ""}${metadata.map((c) => ` AND ${c}`).join("")}`;
    // open_children: a parent's work is its children; open_blockers: its open blockers that are
    // no hubs (counts the schema's triggers keep). Both are conditions of idx_tasks_ready_leaves,
    // so a blocked task is not in it to be stepped over; `unblocked` still reads hub blockers.
    const free = `${open} AND t.lease_expires_at IS NULL AND t.open_children = 0 AND t.open_blockers = 0 AND (t.owner IS NULL OR t.owner = ?) ${list} AND ${unblocked}`;
    const expired = `${open} AND t.lease_expires_at IS NOT NULL AND t.lease_expires_at <= ? AND t.open_children = 0 ${list} AND ${unblocked}`;
    const mine = `${open} AND t.claim_session = ? AND t.lease_expires_at > ? AND t.open_children = 0 ${list} AND ${unblocked}`;
    if (d.name === "sqlite") {
      // SQLite: ordered sources merged (it merges a compound ORDER BY and stops at the LIMIT):
      // unleased open tasks in priority order, the few whose lease has run out, and (reads only)
      // the session's own. Claimed tasks are in none of the first two indexes, so a busy project
      // does not make every claim skip past all of them.
      const own = forUpdate
        ? ""
        : `UNION ALL SELECT ${columns} FROM tasks t ${d.indexedBy("idx_tasks_claim_session")} WHERE ${mine}`;
      return `SELECT ${columns} FROM tasks t ${d.indexedBy("idx_tasks_ready_leaves")} WHERE ${free}
         UNION ALL
         SELECT ${columns} FROM tasks t ${d.indexedBy("idx_tasks_lease")} WHERE ${expired}
         ${own}
         ORDER BY priority, created_at, id LIMIT ? OFFSET ?`;
    }
    // Postgres: the same sources, each its own ordered, limited scan (so the planner never sorts
    // every open task), taken as CTEs because a write transaction locks the rows it hands out
    // there and passes over rows another transaction holds (FOR UPDATE SKIP LOCKED), which
    // Postgres does not allow on a UNION. The projection then runs on those few rows only.
    const lock = forUpdate ? d.forUpdate("t", { skipLocked: true }) : "";
    const own = forUpdate ? "" : `, mine AS (SELECT t.id FROM tasks t WHERE ${mine} ORDER BY ${TASK_ORDER} LIMIT ?)`;
    return `WITH free AS (SELECT t.id FROM tasks t WHERE ${free} ORDER BY ${TASK_ORDER} LIMIT ?${lock}),
       expired AS (SELECT t.id FROM tasks t WHERE ${expired} ORDER BY ${TASK_ORDER} LIMIT ?${lock})${own}
       SELECT ${columns} FROM tasks t
       WHERE t.id IN (SELECT id FROM free UNION ALL SELECT id FROM expired${forUpdate ? "" : " UNION ALL SELECT id FROM mine"})
       ORDER BY ${TASK_ORDER} LIMIT ? OFFSET ?`;
  };
  const variants = (withFiles: boolean) => ({
    all: build(false, false, false, withFiles),
    byList: build(true, false, false, withFiles),
    allAfter: build(false, false, true, withFiles),
    byListAfter: build(true, false, true, withFiles),
    allForUpdate: build(false, true, false, withFiles),
    byListForUpdate: build(true, true, false, withFiles),
    allForUpdateAfter: build(false, true, true, withFiles),
    byListForUpdateAfter: build(true, true, true, withFiles),
  });
  return { plain: variants(false), withFiles: variants(true), build };
});

function params(
  d: Dialect,
  filter: ReadyFilter,
  forUpdate: boolean,
  withFiles: boolean,
  metadata: SqlValue[],
): SqlValue[] {
  const list: SqlValue[] = filter.list_id === undefined ? [] : [filter.list_id];
  if (filter.after !== undefined) list.push(...filter.after);
  list.push(...metadata);
  const agent = filter.agent ?? null;
  const session = filter.session ?? null;
  // The stored_files column's one parameter, where its column stands.
  const files = withFiles ? [filter.now] : [];
  if (d.name === "sqlite") {
    // Each source of the compound projects its own rows.
    const own = forUpdate ? [] : [...files, session, filter.now, ...list];
    return [...files, agent, ...list, ...files, filter.now, ...list, ...own, filter.limit, filter.offset];
  }
  // Each source needs no more rows than the page reaches.
  const reach = filter.limit + filter.offset;
  const own = forUpdate ? [] : [session, filter.now, ...list, reach];
  return [agent, ...list, reach, filter.now, ...list, reach, ...own, ...files, filter.limit, filter.offset];
}

/**
 * The ready read for `filter`, as SQL and parameters: in a write (`forUpdate`) it locks the rows
 * it hands out. Exported for EXPLAIN (the tests check its plan on a store without statistics).
 */
export function readyStatement(
  d: Dialect,
  filter: ReadyFilter,
  forUpdate: boolean,
  withFiles = false,
): { sql: string; params: SqlValue[] } {
  const sql = withFiles ? texts(d).withFiles : texts(d).plain;
  const byList = filter.list_id !== undefined;
  const after = filter.after !== undefined;
  const metadata = metadataConditions(d, filter.metadata);
  // Filtered by metadata: a text of its own for the filter's keys (its prepared statement is cached like any).
  if (metadata.where.length > 0)
    return {
      sql: texts(d).build(byList, forUpdate, after, withFiles, metadata.where),
      params: params(d, filter, forUpdate, withFiles, metadata.params),
    };
  const read = after ? (byList ? sql.byListAfter : sql.allAfter) : byList ? sql.byList : sql.all;
  // A claim reads on past a task it may not take (one sharing files with another session's work).
  const locked = after
    ? byList
      ? sql.byListForUpdateAfter
      : sql.allForUpdateAfter
    : byList
      ? sql.byListForUpdate
      : sql.allForUpdate;
  const text = forUpdate ? locked : read;
  return { sql: text, params: params(d, filter, forUpdate, withFiles, []) };
}

export function readyStatements(db: SqlDb) {
  return {
    async readyTasks(filter: ReadyFilter): Promise<Task[]> {
      const { sql, params } = readyStatement(db.dialect, filter, db.writable);
      return (await db.all(sql, ...params)).map(toTask);
    },

    /** readyTasks, each with the files stored for it (written, reserved for it), in the same statement. */
    async readyWithFiles(filter: ReadyFilter): Promise<ReadyWithFiles[]> {
      const { sql, params } = readyStatement(db.dialect, filter, db.writable, true);
      return (await db.all(sql, ...params)).map((row) => ({ task: toTask(row), stored_files: storedFilesOf(row) }));
    },
  };
}

/** A ready task and the files stored for it: those it wrote, the patterns reserved for it. */
export interface ReadyWithFiles {
  task: Task;
  stored_files: string[];
}
