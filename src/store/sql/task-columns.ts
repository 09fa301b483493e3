import { type Dialect, perDialect } from "./dialect.js";

/** Task order for listings: priority first, then age, then id for a total order. */
export const TASK_ORDER = "t.priority, t.created_at, t.id";

/** Rows after a TaskKey in TASK_ORDER: a keyset page (three parameters, the key's values). */
export const AFTER_TASK_KEY = "(t.priority, t.created_at, t.id) > (?, ?, ?)";

export const UNFINISHED = "('open', 'in_progress')";

/** The live blockers of task `alias` that are neither completed nor cancelled: while any exists, it is blocked. */
function unfinishedBlockers(alias: string): string {
  return `SELECT 1 FROM relationships r JOIN tasks b ON b.id = r.from_task_id
     WHERE r.to_task_id = ${alias}.id AND r.type = 'blocks' AND r.removed_at IS NULL
       AND b.deleted_at IS NULL AND b.status IN ${UNFINISHED}`;
}

/** A task is blocked while any live blocker is neither completed nor cancelled (a filter). */
export function blockedExpression(alias: string): string {
  return `EXISTS (${unfinishedBlockers(alias)})`;
}

/**
 * The same rule as a column of the task projection. Written as a scalar subquery, not EXISTS:
 * Postgres may answer an EXISTS in a select list with a hashed subplan, which joins every blocks
 * edge to every unfinished task once per statement (90 ms at 100,000 tasks) however few rows the
 * statement returns; a scalar subquery is looked up per row returned.
 */
function blockedColumn(alias: string): string {
  return `(${unfinishedBlockers(alias)} LIMIT 1) IS NOT NULL`;
}

/** A task is blocking while it blocks a live task that is still unfinished. */
export function isBlockingExpression(alias: string): string {
  return `EXISTS (SELECT 1 FROM relationships r JOIN tasks d ON d.id = r.to_task_id
     WHERE r.from_task_id = ${alias}.id AND r.type = 'blocks' AND r.removed_at IS NULL
       AND d.deleted_at IS NULL AND d.status IN ${UNFINISHED})`;
}

/**
 * An open edge is a live `blocks` edge whose two ends are live and unfinished. Triggers keep
 * relationships.open_edge: 0 when the edge is not open; 1 when it is; 2 when the blocked end is
 * live and unfinished and the blocker is a hub (over 100 edges out), whose own state is then read
 * here from idx_tasks_unfinished. So finishing a task that blocks 200,000 writes no edge row, and
 * only the edges of hubs cost a lookup.
 */
export function openBlockerOf(d: Dialect, edge: string): string {
  return `(${edge}.open_edge = 1 OR EXISTS (SELECT 1 FROM tasks ob ${d.indexedBy("idx_tasks_unfinished")}
    WHERE ob.id = ${edge}.from_task_id AND ob.deleted_at IS NULL AND ob.status IN ${UNFINISHED}))`;
}

/** Live edges into a live, unfinished task (relationships.open_edge above 0, indexed). */
export const OPEN_INTO = "r.type = 'blocks' AND r.removed_at IS NULL AND r.open_edge > 0";

/** The task `alias` (live and unfinished) has an open blocker. */
export function openEdgeInto(d: Dialect, alias: string): string {
  return `EXISTS (SELECT 1 FROM relationships r ${d.indexedBy("idx_relationships_open_blocks")}
    WHERE r.to_task_id = ${alias}.id AND ${OPEN_INTO} AND ${openBlockerOf(d, "r")})`;
}

/**
 * The task projection every read shares. parent_id, blocked_by, blocks and the derived `blocked` flag are
 * read from relationships so that no stored column can drift from the graph. blocked_by and blocks
 * come back as JSON text ordered by task id. blocks names the first BLOCKS_SHOWN: a hub may block
 * hundreds of thousands, which no task object should carry (the blocking_tasks query lists all).
 */
export const BLOCKS_SHOWN = 50;

export const taskColumns = perDialect(
  (d) => `t.id, t.list_id, t.title, t.type, t.status, t.intent, t.description, t.plan,
  t.priority, t.risk, t.impact, t.owner, t.lease_expires_at, t.claim_session, t.active_form, t.metadata, t.version, t.created_at, t.updated_at,
  (SELECT r.from_task_id FROM relationships r JOIN tasks p ON p.id = r.from_task_id
     WHERE r.to_task_id = t.id AND r.type = 'parent_of' AND r.removed_at IS NULL
       AND p.deleted_at IS NULL) AS parent_id,
  (SELECT ${d.jsonArray("s.id", "s.id")} FROM (SELECT r.from_task_id AS id FROM relationships r
     JOIN tasks b ON b.id = r.from_task_id
     WHERE r.to_task_id = t.id AND r.type = 'blocks' AND r.removed_at IS NULL AND b.deleted_at IS NULL
     ORDER BY r.from_task_id) s) AS blocked_by_json,
  (SELECT ${d.jsonArray("s.id", "s.id")} FROM (SELECT r.to_task_id AS id FROM relationships r
     JOIN tasks b ON b.id = r.to_task_id
     WHERE r.from_task_id = t.id AND r.type = 'blocks' AND r.removed_at IS NULL AND b.deleted_at IS NULL
     ORDER BY r.to_task_id LIMIT ${BLOCKS_SHOWN}) s) AS blocks_json,
  ${blockedColumn("t")} AS blocked`,
);
