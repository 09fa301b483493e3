import { blockedExpression } from "../sqlite/task-sql.js";

// The blocked / blocking expressions and the task order are plain SQL that both stores share.
export { blockedExpression, isBlockingExpression, TASK_ORDER } from "../sqlite/task-sql.js";

/**
 * The task projection every read shares, as in src/store/sqlite/task-sql.ts: parent_id,
 * blocked_by and the derived `blocked` flag are read from relationships so that no stored column
 * can drift from the graph. blocked_by comes back as JSON text ordered by blocker id (the order
 * SQLite's index walk yields), so both stores decode rows with the same rows.ts.
 */
export const TASK_COLUMNS = `t.id, t.list_id, t.title, t.type, t.status, t.intent, t.description, t.plan,
  t.priority, t.owner, t.lease_expires_at, t.active_form, t.version, t.created_at, t.updated_at,
  (SELECT r.from_task_id FROM relationships r JOIN tasks p ON p.id = r.from_task_id
     WHERE r.to_task_id = t.id AND r.type = 'parent_of' AND r.removed_at IS NULL
       AND p.deleted_at IS NULL) AS parent_id,
  (SELECT json_agg(r.from_task_id ORDER BY r.from_task_id)::text FROM relationships r
     JOIN tasks b ON b.id = r.from_task_id
     WHERE r.to_task_id = t.id AND r.type = 'blocks' AND r.removed_at IS NULL
       AND b.deleted_at IS NULL) AS blocked_by_json,
  ${blockedExpression("t")} AS blocked`;

/** A text parameter that seeds a recursive query over "C"-collated ids must carry that collation. */
export const ID_PARAM = `?::text COLLATE "C"`;
