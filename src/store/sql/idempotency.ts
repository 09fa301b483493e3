import type { IdempotentRecord } from "../task-store.js";
import type { SqlDb } from "./database.js";

const GET = "SELECT tool, args_hash, response FROM idempotency WHERE agent = ? AND request_id = ?";
const PUT =
  "INSERT INTO idempotency (agent, request_id, tool, args_hash, response, created_at) VALUES (?, ?, ?, ?, ?, ?)";

/** Idempotency records: the first response to a request id, replayed on a repeat. */
export function idempotencyStatements(db: SqlDb) {
  return {
    async getIdempotent(agent: string, requestId: string): Promise<IdempotentRecord | undefined> {
      return (await db.get(GET, agent, requestId)) as IdempotentRecord | undefined;
    },

    async putIdempotent(
      record: IdempotentRecord & { agent: string; request_id: string; created_at: string },
    ): Promise<void> {
      await db.run(
        PUT,
        record.agent,
        record.request_id,
        record.tool,
        record.args_hash,
        record.response,
        record.created_at,
      );
    },
  };
}
