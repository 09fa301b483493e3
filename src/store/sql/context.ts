import type { ContextEntry } from "../../domain/types.js";
import { toContext } from "../rows.js";
import type { StoreTx } from "../task-store.js";
import type { SqlDb } from "./database.js";
import { perDialect } from "./dialect.js";
import { insertWithId, jsonColumn } from "./insert.js";
import { type RecentFilter, recentFilter } from "./recent.js";

const BY_ID = "SELECT * FROM context_entries WHERE id = ?";
const lockById = perDialect((d) => `${BY_ID}${d.forUpdate("context_entries")}`);
const SUPERSEDE = "UPDATE context_entries SET superseded_by = ? WHERE id = ? AND superseded_by IS NULL";
const OF_TASK = "SELECT * FROM context_entries WHERE task_id = ? ORDER BY rowid";
const LIVE_OF_TASK = "SELECT * FROM context_entries WHERE task_id = ? AND superseded_by IS NULL ORDER BY rowid";

/** Context entries: immutable, replaced only by superseding. */
export function contextStatements(db: SqlDb) {
  return {
    insertContext(entry: Parameters<StoreTx["insertContext"]>[0]): Promise<string> {
      return insertWithId(
        db,
        "context",
        "context_entries",
        ["task_id", "type", "content", "metadata", "created_at"],
        [entry.task_id, entry.type, entry.content, jsonColumn(entry.metadata), entry.created_at],
      );
    },

    async getContext(id: string): Promise<ContextEntry | undefined> {
      const row = await db.get(BY_ID, id);
      return row ? toContext(row) : undefined;
    },

    async lockContext(id: string): Promise<ContextEntry | undefined> {
      const row = await db.get(lockById(db.dialect), id);
      return row ? toContext(row) : undefined;
    },

    /** Marks `id` superseded by `by` if it is not already; returns false if it was. */
    async markSuperseded(id: string, by: string): Promise<boolean> {
      return (await db.run(SUPERSEDE, by, id)) === 1;
    },

    async contextOf(taskId: string, includeSuperseded: boolean): Promise<ContextEntry[]> {
      return (await db.all(includeSuperseded ? OF_TASK : LIVE_OF_TASK, taskId)).map(toContext);
    },

    async recentContext(filter: RecentFilter): Promise<ContextEntry[]> {
      const { clause, params } = recentFilter(filter);
      const rows = await db.all(
        `SELECT c.* FROM context_entries c JOIN tasks t ON t.id = c.task_id
         WHERE c.created_at >= ? AND t.deleted_at IS NULL ${clause}
         ORDER BY c.created_at DESC, c.rowid DESC LIMIT ?`,
        filter.since,
        ...params,
        filter.limit,
      );
      return rows.map(toContext);
    },
  };
}
