import type { ProgressItem } from "../../domain/types.js";
import { toProgress } from "../rows.js";
import type { SqlDb } from "./database.js";
import { perDialect } from "./dialect.js";
import { insertWithId } from "./insert.js";
import { type RecentFilter, recentFilter } from "./recent.js";

const texts = perDialect((d) => ({
  byIds: `SELECT * FROM progress_items WHERE ${d.inList("id")}`,
  // In id order, so that two writers locking overlapping items never wait for each other in a circle.
  lockByIds: `SELECT * FROM progress_items WHERE ${d.inList("id")} ORDER BY id${d.forUpdate("progress_items")}`,
  complete: `UPDATE progress_items SET completed = 1, completed_at = ? WHERE ${d.inList("id")} AND completed = 0`,
}));

const OF_TASK = "SELECT * FROM progress_items WHERE task_id = ? ORDER BY rowid";

/** Progress items: the steps of a task's work. */
export function progressStatements(db: SqlDb) {
  const d = db.dialect;
  const sql = texts(d);
  return {
    insertProgress(item: {
      task_id: string;
      content: string;
      completed: boolean;
      created_at: string;
    }): Promise<string> {
      return insertWithId(
        db,
        "progress",
        "progress_items",
        ["task_id", "content", "completed", "created_at", "completed_at"],
        [item.task_id, item.content, item.completed ? 1 : 0, item.created_at, item.completed ? item.created_at : null],
      );
    },

    async getProgressItems(ids: readonly string[]): Promise<ProgressItem[]> {
      if (ids.length === 0) return [];
      return (await db.all(sql.byIds, d.listParam(ids))).map(toProgress);
    },

    async lockProgressItems(ids: readonly string[]): Promise<ProgressItem[]> {
      if (ids.length === 0) return [];
      return (await db.all(sql.lockByIds, d.listParam(ids))).map(toProgress);
    },

    async completeProgress(ids: readonly string[], at: string): Promise<void> {
      if (ids.length === 0) return;
      db.later(sql.complete, at, d.listParam(ids));
    },

    async progressOf(taskId: string): Promise<ProgressItem[]> {
      return (await db.all(OF_TASK, taskId)).map(toProgress);
    },

    async recentProgress(filter: RecentFilter): Promise<ProgressItem[]> {
      const { clause, params } = recentFilter(filter);
      const rows = await db.all(
        `SELECT p.* FROM progress_items p JOIN tasks t ON t.id = p.task_id
         WHERE (p.created_at >= ? OR p.completed_at >= ?) AND t.deleted_at IS NULL ${clause}
         ORDER BY COALESCE(p.completed_at, p.created_at) DESC, p.rowid DESC LIMIT ?`,
        filter.since,
        filter.since,
        ...params,
        filter.limit,
      );
      return rows.map(toProgress);
    },
  };
}
