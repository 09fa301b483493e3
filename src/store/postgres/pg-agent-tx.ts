import type { ArbeitEvent, MemoryEntry, MemoryScope, Task } from "../../domain/types.js";
import { toEvent, toMemory, toTask } from "../rows.js";
import type { AgentState, IdempotentRecord, StoreTx } from "../task-store.js";
import { PgTx } from "./pg-tx.js";
import type { PgValue } from "./sql.js";
import { TASK_COLUMNS, TASK_ORDER } from "./task-sql.js";

const UNFINISHED = "('open', 'in_progress')";

/** Claims, idempotency, agent state, memory and graph reads (schema v2, DESIGN §5). */
export class PgAgentTx extends PgTx implements StoreTx {
  // ---- claims --------------------------------------------------------------------------------

  async setClaim(
    id: string,
    claim: { owner: string; lease_expires_at: string; claimed_at: string | null },
    at: string,
  ): Promise<void> {
    await this.sql.run(
      `UPDATE tasks SET owner = ?, lease_expires_at = ?, claimed_at = COALESCE(?, claimed_at),
         version = version + 1, updated_at = ? WHERE id = ?`,
      claim.owner,
      claim.lease_expires_at,
      claim.claimed_at,
      at,
      id,
    );
  }

  async clearClaim(id: string, at: string): Promise<void> {
    await this.sql.run(
      "UPDATE tasks SET owner = NULL, lease_expires_at = NULL, version = version + 1, updated_at = ? WHERE id = ?",
      at,
      id,
    );
  }

  async expiredClaims(now: string): Promise<Array<{ id: string; owner: string; lease_expires_at: string }>> {
    return (await this.sql.all(
      `SELECT id, owner, lease_expires_at FROM tasks
       WHERE deleted_at IS NULL AND owner IS NOT NULL AND lease_expires_at IS NOT NULL AND lease_expires_at <= ?
       ORDER BY lease_expires_at, id`,
      now,
    )) as Array<{ id: string; owner: string; lease_expires_at: string }>;
  }

  async claimsOf(agent: string, now: string): Promise<Task[]> {
    // NULLS LAST: SQLite sorts NULL lowest, so a descending order puts it last.
    const rows = await this.sql.all(
      `SELECT ${TASK_COLUMNS} FROM tasks t
       WHERE t.deleted_at IS NULL AND t.owner = ? AND t.lease_expires_at > ?
       ORDER BY t.claimed_at DESC NULLS LAST, t.id`,
      agent,
      now,
    );
    return rows.map(toTask);
  }

  // ---- idempotency ---------------------------------------------------------------------------

  async getIdempotent(agent: string, requestId: string): Promise<IdempotentRecord | undefined> {
    return (await this.sql.get(
      "SELECT tool, args_hash, response FROM idempotency WHERE agent = ? AND request_id = ?",
      agent,
      requestId,
    )) as IdempotentRecord | undefined;
  }

  async putIdempotent(
    record: IdempotentRecord & { agent: string; request_id: string; created_at: string },
  ): Promise<void> {
    await this.sql.run(
      "INSERT INTO idempotency (agent, request_id, tool, args_hash, response, created_at) VALUES (?, ?, ?, ?, ?, ?)",
      record.agent,
      record.request_id,
      record.tool,
      record.args_hash,
      record.response,
      record.created_at,
    );
  }

  // ---- agent state ---------------------------------------------------------------------------

  async agentState(agent: string): Promise<AgentState | undefined> {
    const row = await this.sql.get(
      "SELECT agent, cursor_seq, focus_task_id, updated_at FROM agent_state WHERE agent = ?",
      agent,
    );
    return row ? { ...(row as unknown as AgentState), cursor_seq: Number(row.cursor_seq) } : undefined;
  }

  async saveAgentState(
    agent: string,
    state: { cursor_seq: number; focus_task_id: string | null },
    at: string,
  ): Promise<void> {
    await this.sql.run(
      `INSERT INTO agent_state (agent, cursor_seq, focus_task_id, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (agent) DO UPDATE SET cursor_seq = GREATEST(agent_state.cursor_seq, excluded.cursor_seq),
         focus_task_id = excluded.focus_task_id, updated_at = excluded.updated_at`,
      agent,
      state.cursor_seq,
      state.focus_task_id,
      at,
    );
  }

  async maxEventSeq(): Promise<number> {
    return Number((await this.sql.get("SELECT COALESCE(MAX(seq), 0) AS seq FROM events"))?.seq ?? 0);
  }

  // ---- memory --------------------------------------------------------------------------------

  async memoryGet(scope: MemoryScope, scopeId: string, key: string, now: string): Promise<MemoryEntry | undefined> {
    const row = await this.sql.get(
      `SELECT * FROM memory WHERE scope = ? AND scope_id = ? AND key = ? AND (expires_at IS NULL OR expires_at > ?)`,
      scope,
      scopeId,
      key,
      now,
    );
    return row ? toMemory(row) : undefined;
  }

  async memoryList(filter: {
    scopes: Array<{ scope: MemoryScope; scope_id: string }>;
    prefix?: string;
    now: string;
    limit: number;
  }): Promise<MemoryEntry[]> {
    if (filter.scopes.length === 0) return [];
    const scopeClause = filter.scopes.map(() => "(scope = ? AND scope_id = ?)").join(" OR ");
    const params: PgValue[] = filter.scopes.flatMap(({ scope, scope_id }) => [scope, scope_id]);
    let prefixClause = "";
    if (filter.prefix) {
      // starts_with rather than LIKE: keys may hold % and _ literally.
      prefixClause = "AND starts_with(key, ?)";
      params.push(filter.prefix);
    }
    const rows = await this.sql.all(
      `SELECT * FROM memory WHERE (${scopeClause}) ${prefixClause} AND (expires_at IS NULL OR expires_at > ?)
       ORDER BY scope, scope_id, key LIMIT ?`,
      ...params,
      filter.now,
      filter.limit,
    );
    return rows.map(toMemory);
  }

  async memoryUpsert(entry: {
    scope: MemoryScope;
    scope_id: string;
    key: string;
    value: unknown;
    expires_at: string | null;
    at: string;
  }): Promise<MemoryEntry> {
    const value = JSON.stringify(entry.value);
    const existing = await this.sql.get(
      "SELECT id FROM memory WHERE scope = ? AND scope_id = ? AND key = ?",
      entry.scope,
      entry.scope_id,
      entry.key,
    );
    if (existing) {
      await this.sql.run(
        "UPDATE memory SET value = ?, expires_at = ?, updated_at = ? WHERE id = ?",
        value,
        entry.expires_at,
        entry.at,
        existing.id as string,
      );
    } else {
      await this.insertWithId(
        "memory",
        "memory",
        ["scope", "scope_id", "key", "value", "expires_at", "created_at", "updated_at"],
        [entry.scope, entry.scope_id, entry.key, value, entry.expires_at, entry.at, entry.at],
      );
    }
    const row = await this.sql.get(
      "SELECT * FROM memory WHERE scope = ? AND scope_id = ? AND key = ?",
      entry.scope,
      entry.scope_id,
      entry.key,
    );
    return toMemory(row!);
  }

  async memoryDelete(scope: MemoryScope, scopeId: string, key: string): Promise<string | undefined> {
    const row = await this.sql.get(
      "DELETE FROM memory WHERE scope = ? AND scope_id = ? AND key = ? RETURNING id",
      scope,
      scopeId,
      key,
    );
    return row?.id as string | undefined;
  }

  async memorySweep(now: string): Promise<number> {
    return this.sql.run("DELETE FROM memory WHERE expires_at IS NOT NULL AND expires_at <= ?", now);
  }

  async eventsForTasks(
    taskIds: readonly string[],
    afterSeq: number,
    limit: number,
  ): Promise<{ total: number; events: ArbeitEvent[] }> {
    if (taskIds.length === 0) return { total: 0, events: [] };
    const count = await this.sql.get(
      "SELECT COUNT(*) AS n FROM events WHERE task_id = ANY(?::text[]) AND seq > ?",
      taskIds,
      afterSeq,
    );
    const rows = await this.sql.all(
      "SELECT * FROM events WHERE task_id = ANY(?::text[]) AND seq > ? ORDER BY seq DESC LIMIT ?",
      taskIds,
      afterSeq,
      limit,
    );
    return { total: Number(count?.n ?? 0), events: rows.map(toEvent).reverse() };
  }

  // ---- graph analysis ------------------------------------------------------------------------

  #scope(
    filter: { list_id?: string; under?: string },
    alias: string,
  ): { clause: string; params: PgValue[]; cte: string } {
    const parts: string[] = [];
    const params: PgValue[] = [];
    let cte = "";
    if (filter.under !== undefined) {
      cte = `WITH RECURSIVE under_root(id) AS (
        SELECT to_task_id FROM relationships WHERE from_task_id = ? AND type = 'parent_of' AND removed_at IS NULL
        UNION SELECT r.to_task_id FROM relationships r JOIN under_root u ON r.from_task_id = u.id
          WHERE r.type = 'parent_of' AND r.removed_at IS NULL) `;
      parts.push(`${alias}.id IN (SELECT id FROM under_root)`);
    }
    if (filter.list_id !== undefined) {
      parts.push(`${alias}.list_id = ?`);
      params.push(filter.list_id);
    }
    return { clause: parts.map((p) => `AND ${p}`).join(" "), params, cte };
  }

  async blockEdges(filter: { list_id?: string; under?: string }): Promise<Array<[string, string]>> {
    const from = this.#scope(filter, "f");
    const to = this.#scope(filter, "t");
    const head: PgValue[] = filter.under !== undefined ? [filter.under] : [];
    const rows = await this.sql.all(
      `${from.cte}SELECT r.from_task_id AS a, r.to_task_id AS b FROM relationships r
       JOIN tasks f ON f.id = r.from_task_id JOIN tasks t ON t.id = r.to_task_id
       WHERE r.type = 'blocks' AND r.removed_at IS NULL
         AND f.deleted_at IS NULL AND f.status IN ${UNFINISHED} ${from.clause}
         AND t.deleted_at IS NULL AND t.status IN ${UNFINISHED} ${to.clause}`,
      ...head,
      ...from.params,
      ...to.params,
    );
    return rows.map((row) => [row.a as string, row.b as string]);
  }

  async unblockedUnfinished(filter: {
    list_id?: string;
    under?: string;
    limit: number;
  }): Promise<{ total: number; tasks: Task[] }> {
    const scope = this.#scope(filter, "t");
    const head: PgValue[] = filter.under !== undefined ? [filter.under] : [];
    const where = `t.deleted_at IS NULL AND t.status IN ${UNFINISHED} ${scope.clause}
      AND NOT EXISTS (SELECT 1 FROM relationships r JOIN tasks b ON b.id = r.from_task_id
        WHERE r.to_task_id = t.id AND r.type = 'blocks' AND r.removed_at IS NULL
          AND b.deleted_at IS NULL AND b.status IN ${UNFINISHED})`;
    const count = await this.sql.get(
      `${scope.cte}SELECT COUNT(*) AS n FROM tasks t WHERE ${where}`,
      ...head,
      ...scope.params,
    );
    // The tasks shown are the best of them to start now: open and unclaimed, in ready order.
    const rows = await this.sql.all(
      `${scope.cte}SELECT ${TASK_COLUMNS} FROM tasks t
       WHERE ${where} AND t.status = 'open' AND t.lease_expires_at IS NULL ORDER BY ${TASK_ORDER} LIMIT ?`,
      ...head,
      ...scope.params,
      filter.limit,
    );
    return { total: Number(count?.n ?? 0), tasks: rows.map(toTask) };
  }
}
