import type { Task } from "../../domain/types.js";
import { toTask } from "../rows.js";
import type { NewTask, StatusFilter, TaskFilter, TaskPatch } from "../task-store.js";
import type { SqlDb, SqlValue } from "./database.js";
import { perDialect } from "./dialect.js";
import { insertWithId, jsonColumn } from "./insert.js";
import { metadataConditions } from "./metadata-filter.js";
import {
  AFTER_TASK_KEY,
  blockedExpression,
  isBlockingExpression,
  TASK_ORDER,
  taskColumns,
  UNFINISHED,
} from "./task-columns.js";

/** The columns a new task row is written with. A new task starts at version 1, updated when created. */
const NEW_TASK_FIELDS = [
  "list_id",
  "title",
  "type",
  "status",
  "intent",
  "description",
  "plan",
  "priority",
  "risk",
  "impact",
  "owner",
  "active_form",
  "metadata",
] as const;

const texts = perDialect((d) => {
  const columns = taskColumns(d);
  return {
    byId: `SELECT ${columns} FROM tasks t WHERE t.id = ? AND t.deleted_at IS NULL`,
    activeTaskOf: `SELECT ${columns} FROM tasks t WHERE t.id = (SELECT w.task_id FROM active_work w
      WHERE w.session_id = ? AND w.stopped_at IS NULL) AND t.deleted_at IS NULL`,
    byIdForUpdate: `SELECT ${columns} FROM tasks t WHERE t.id = ? AND t.deleted_at IS NULL${d.forUpdate("t")}`,
    byIds: `SELECT ${columns} FROM tasks t WHERE ${d.inList("t.id")} AND t.deleted_at IS NULL ORDER BY ${TASK_ORDER}`,
    exists: "SELECT deleted_at FROM tasks WHERE id = ?",
    touch: "UPDATE tasks SET version = version + 1, updated_at = ? WHERE id = ?",
    softDelete: "UPDATE tasks SET deleted_at = ?, updated_at = ?, version = version + 1 WHERE id = ?",
    stale: (listClause: string, afterClause: string) => `SELECT ${columns} FROM tasks t
       WHERE t.deleted_at IS NULL AND t.status IN ${UNFINISHED} ${listClause} ${afterClause}
         AND ${d.greatest("t.updated_at", "COALESCE((SELECT MAX(e.timestamp) FROM events e WHERE e.task_id = t.id), '')")} < ?
       ORDER BY t.updated_at, t.id LIMIT ? OFFSET ?`,
  };
});

/** A task field as its column holds it: metadata as JSON text, every other field as it is. */
function columnValue(field: string, value: unknown): SqlValue {
  if (field === "metadata") return jsonColumn(value as Record<string, unknown> | null);
  return value as SqlValue;
}

/** Reads and writes of task rows. */
export function taskStatements(db: SqlDb) {
  const d = db.dialect;
  const sql = texts(d);
  const columns = taskColumns(d);

  /** Tasks matching `where` (and the common list and status filters), in task order. */
  async function filtered(where: string[], params: SqlValue[], filter: StatusFilter): Promise<Task[]> {
    if (filter.list_id !== undefined) {
      where.push("t.list_id = ?");
      params.push(filter.list_id);
    }
    if (filter.statuses && filter.statuses.length > 0) {
      where.push(d.inList("t.status"));
      params.push(d.listParam(filter.statuses));
    }
    if (filter.after !== undefined) {
      where.push(AFTER_TASK_KEY);
      params.push(...filter.after);
    }
    const rows = await db.all(
      `SELECT ${columns} FROM tasks t WHERE ${where.join(" AND ")} ORDER BY ${TASK_ORDER} LIMIT ? OFFSET ?`,
      ...params,
      filter.limit,
      filter.offset,
    );
    return rows.map(toTask);
  }

  return {
    async getTask(id: string): Promise<Task | undefined> {
      const row = await db.get(sql.byId, id);
      return row ? toTask(row) : undefined;
    },

    async activeTaskOf(session: string): Promise<Task | undefined> {
      const row = await db.get(sql.activeTaskOf, session);
      return row ? toTask(row) : undefined;
    },

    /** The task, locked against other writers until this transaction ends (Postgres row lock). */
    async lockTask(id: string): Promise<Task | undefined> {
      const row = await db.get(db.writable ? sql.byIdForUpdate : sql.byId, id);
      return row ? toTask(row) : undefined;
    },

    async getTasks(ids: readonly string[]): Promise<Task[]> {
      if (ids.length === 0) return [];
      return (await db.all(sql.byIds, d.listParam(ids))).map(toTask);
    },

    async taskExists(id: string): Promise<{ exists: boolean; deleted: boolean }> {
      const row = await db.get(sql.exists, id);
      return { exists: row !== undefined, deleted: row !== undefined && row.deleted_at !== null };
    },

    insertTask(task: NewTask): Promise<string> {
      return insertWithId(
        db,
        "task",
        "tasks",
        [...NEW_TASK_FIELDS, "version", "created_at", "updated_at"],
        [...NEW_TASK_FIELDS.map((field) => columnValue(field, task[field])), 1, task.created_at, task.created_at],
      );
    },

    async updateTask(id: string, patch: TaskPatch, updatedAt: string): Promise<void> {
      const changed = (Object.keys(patch) as Array<keyof TaskPatch>).filter((key) => patch[key] !== undefined).sort();
      const assignments = changed.map((column) => `${column} = ?`);
      const values = changed.map((column) => columnValue(column, patch[column] ?? null));
      db.later(
        `UPDATE tasks SET ${[...assignments, "version = version + 1", "updated_at = ?"].join(", ")} WHERE id = ?`,
        ...values,
        updatedAt,
        id,
      );
    },

    async touchTask(id: string, updatedAt: string): Promise<void> {
      db.later(sql.touch, updatedAt, id);
    },

    async softDeleteTask(id: string, at: string): Promise<void> {
      db.later(sql.softDelete, at, at, id);
    },

    listTasks(filter: TaskFilter): Promise<Task[]> {
      const where = ["t.deleted_at IS NULL"];
      const params: SqlValue[] = [];
      if (filter.type !== undefined) {
        where.push("t.type = ?");
        params.push(filter.type);
      }
      if (filter.owner !== undefined) {
        where.push("t.owner = ?");
        params.push(filter.owner);
      }
      const metadata = metadataConditions(d, filter.metadata);
      where.push(...metadata.where);
      params.push(...metadata.params);
      if (filter.parent_id === null) {
        where.push(`NOT EXISTS (SELECT 1 FROM relationships r JOIN tasks p ON p.id = r.from_task_id
          WHERE r.to_task_id = t.id AND r.type = 'parent_of' AND r.removed_at IS NULL AND p.deleted_at IS NULL)`);
      } else if (filter.parent_id !== undefined) {
        where.push(`EXISTS (SELECT 1 FROM relationships r
          WHERE r.to_task_id = t.id AND r.from_task_id = ? AND r.type = 'parent_of' AND r.removed_at IS NULL)`);
        params.push(filter.parent_id);
      }
      return filtered(where, params, filter);
    },

    blockedTasks(filter: StatusFilter): Promise<Task[]> {
      return filtered(["t.deleted_at IS NULL", blockedExpression("t")], [], filter);
    },

    blockingTasks(filter: StatusFilter): Promise<Task[]> {
      return filtered(["t.deleted_at IS NULL", `t.status IN ${UNFINISHED}`, isBlockingExpression("t")], [], filter);
    },

    async staleTasks(filter: {
      list_id?: string;
      updated_before: string;
      limit: number;
      offset: number;
      after?: readonly [string, string];
    }): Promise<Task[]> {
      const byList = filter.list_id !== undefined;
      const rows = await db.all(
        sql.stale(byList ? "AND t.list_id = ?" : "", filter.after ? "AND (t.updated_at, t.id) > (?, ?)" : ""),
        ...(byList ? [filter.list_id as string] : []),
        ...(filter.after ?? []),
        filter.updated_before,
        filter.limit,
        filter.offset,
      );
      return rows.map(toTask);
    },
  };
}
