import type { IdempotencyKey, IdempotentRecord } from "../task-store.js";
import type { SqlDb } from "./database.js";

const GET = "SELECT tool, args_hash, response FROM idempotency WHERE session_id = ? AND list_id = ? AND request_id = ?";
const PUT = `INSERT INTO idempotency (session_id, list_id, request_id, tool, args_hash, response, created_at)
  VALUES (?, ?, ?, ?, ?, ?, ?)`;

/** Idempotency records: the first response to a session's request id, replayed on a repeat. */
export function idempotencyStatements(db: SqlDb) {
  return {
    async getIdempotent(key: IdempotencyKey): Promise<IdempotentRecord | undefined> {
      return (await db.get(GET, key.session_id, key.list_id, key.request_id)) as IdempotentRecord | undefined;
    },

    async putIdempotent(record: IdempotentRecord & IdempotencyKey & { created_at: string }): Promise<void> {
      db.later(
        PUT,
        record.session_id,
        record.list_id,
        record.request_id,
        record.tool,
        record.args_hash,
        record.response,
        record.created_at,
      );
    },
  };
}
