import type { Relationship, RelationshipType } from "../../domain/types.js";
import { toRelationship, toRelationshipRow } from "../rows.js";
import type { RelationshipRow } from "../task-store.js";
import type { SqlDb } from "./database.js";
import { insertWithId, jsonColumn } from "./insert.js";

const FIND = `SELECT * FROM relationships
  WHERE from_task_id = ? AND type = ? AND to_task_id = ? AND removed_at IS NULL`;

// Both directions, each with whether the task at the far end is deleted; a self-edge once.
const OF_TASK = `SELECT r.*, (o.deleted_at IS NOT NULL) AS other_deleted FROM relationships r
    JOIN tasks o ON o.id = r.to_task_id
    WHERE r.from_task_id = ? AND r.removed_at IS NULL
  UNION ALL
  SELECT r.*, (o.deleted_at IS NOT NULL) AS other_deleted FROM relationships r
    JOIN tasks o ON o.id = r.from_task_id
    WHERE r.to_task_id = ? AND r.removed_at IS NULL AND r.from_task_id <> r.to_task_id
  ORDER BY created_at, id`;

const REMOVE = "UPDATE relationships SET removed_at = ? WHERE id = ? AND removed_at IS NULL";

/** Relationship rows: edges between tasks, removed (never deleted) when taken away. */
export function relationshipStatements(db: SqlDb) {
  return {
    async findRelationship(from: string, to: string, type: RelationshipType): Promise<Relationship | undefined> {
      const row = await db.get(FIND, from, type, to);
      return row ? toRelationship(row) : undefined;
    },

    async relationshipsOf(taskId: string): Promise<RelationshipRow[]> {
      return (await db.all(OF_TASK, taskId, taskId)).map(toRelationshipRow);
    },

    insertRelationship(rel: Omit<Relationship, "id">): Promise<string> {
      return insertWithId(
        db,
        "relationship",
        "relationships",
        ["from_task_id", "to_task_id", "type", "metadata", "created_at"],
        [rel.from_task_id, rel.to_task_id, rel.type, jsonColumn(rel.metadata), rel.created_at],
      );
    },

    async removeRelationship(id: string, at: string): Promise<void> {
      db.later(REMOVE, at, id);
    },
  };
}
