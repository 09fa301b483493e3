import { newId } from "../../domain/ids.js";
import type { ArbeitEvent, MemoryEntry, MemoryScope, Task } from "../../domain/types.js";
import { toEvent, toMemory, toTask } from "../rows.js";
import type { AgentState, IdempotentRecord, StoreTx } from "../task-store.js";
import type { SqlDriver, SqlValue } from "./driver.js";
import { SqliteTx } from "./sqlite-tx.js";
import { StatementCache } from "./statement-cache.js";
import { TASK_COLUMNS, TASK_ORDER } from "./task-sql.js";

const UNFINISHED = "('open', 'in_progress')";

/** Claims, idempotency, agent state, memory and graph reads (schema v2, DESIGN §5). */
export class SqliteAgentTx extends SqliteTx implements StoreTx {
  readonly #sql: StatementCache;

  constructor(driver: SqlDriver) {
    super(driver);
    this.#sql = new StatementCache(driver);
  }

  // ---- claims --------------------------------------------------------------------------------

  async setClaim(
    id: string,
    claim: { owner: string; lease_expires_at: string; claimed_at: string | null },
    at: string,
  ): Promise<void> {
    this.#sql
      .stmt(
        `UPDATE tasks SET owner = ?, lease_expires_at = ?, claimed_at = COALESCE(?, claimed_at),
           version = version + 1, updated_at = ? WHERE id = ?`,
      )
      .run(claim.owner, claim.lease_expires_at, claim.claimed_at, at, id);
  }

  async clearClaim(id: string, at: string): Promise<void> {
    this.#sql
      .stmt(
        "UPDATE tasks SET owner = NULL, lease_expires_at = NULL, version = version + 1, updated_at = ? WHERE id = ?",
      )
      .run(at, id);
  }

  async expiredClaims(now: string): Promise<Array<{ id: string; owner: string; lease_expires_at: string }>> {
    return this.#sql.all(
      `SELECT id, owner, lease_expires_at FROM tasks INDEXED BY idx_tasks_lease
       WHERE deleted_at IS NULL AND owner IS NOT NULL AND lease_expires_at IS NOT NULL AND lease_expires_at <= ?
       ORDER BY lease_expires_at, id`,
      now,
    ) as Array<{ id: string; owner: string; lease_expires_at: string }>;
  }

  async claimsOf(agent: string, now: string): Promise<Task[]> {
    return this.#sql
      .all(
        `SELECT ${TASK_COLUMNS} FROM tasks t
         WHERE t.deleted_at IS NULL AND t.owner = ? AND t.lease_expires_at > ?
         ORDER BY t.claimed_at DESC, t.id`,
        agent,
        now,
      )
      .map(toTask);
  }

  // ---- idempotency ---------------------------------------------------------------------------

  async getIdempotent(agent: string, requestId: string): Promise<IdempotentRecord | undefined> {
    return this.#sql.get(
      "SELECT tool, args_hash, response FROM idempotency WHERE agent = ? AND request_id = ?",
      agent,
      requestId,
    ) as IdempotentRecord | undefined;
  }

  async putIdempotent(
    record: IdempotentRecord & { agent: string; request_id: string; created_at: string },
  ): Promise<void> {
    this.#sql
      .stmt(
        "INSERT INTO idempotency (agent, request_id, tool, args_hash, response, created_at) VALUES (?, ?, ?, ?, ?, ?)",
      )
      .run(record.agent, record.request_id, record.tool, record.args_hash, record.response, record.created_at);
  }

  // ---- agent state ---------------------------------------------------------------------------

  async agentState(agent: string): Promise<AgentState | undefined> {
    const row = this.#sql.get(
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
    this.#sql
      .stmt(
        `INSERT INTO agent_state (agent, cursor_seq, focus_task_id, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (agent) DO UPDATE SET cursor_seq = MAX(cursor_seq, excluded.cursor_seq),
           focus_task_id = excluded.focus_task_id, updated_at = excluded.updated_at`,
      )
      .run(agent, state.cursor_seq, state.focus_task_id, at);
  }

  async maxEventSeq(): Promise<number> {
    return Number(this.#sql.get("SELECT COALESCE(MAX(seq), 0) AS seq FROM events")?.seq ?? 0);
  }

  // ---- memory --------------------------------------------------------------------------------

  async memoryGet(scope: MemoryScope, scopeId: string, key: string, now: string): Promise<MemoryEntry | undefined> {
    const row = this.#sql.get(
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
    const params: SqlValue[] = filter.scopes.flatMap(({ scope, scope_id }) => [scope, scope_id]);
    let prefixClause = "";
    if (filter.prefix) {
      // substr comparison rather than LIKE: keys may hold % and _ literally. SQLite's length()
      // counts characters, as substr does; JS .length counts UTF-16 units (2 for an emoji).
      prefixClause = "AND substr(key, 1, length(?)) = ?";
      params.push(filter.prefix, filter.prefix);
    }
    return this.#sql
      .all(
        `SELECT * FROM memory WHERE (${scopeClause}) ${prefixClause} AND (expires_at IS NULL OR expires_at > ?)
         ORDER BY scope, scope_id, key LIMIT ?`,
        ...params,
        filter.now,
        filter.limit,
      )
      .map(toMemory);
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
    const existing = this.#sql.get(
      "SELECT id FROM memory WHERE scope = ? AND scope_id = ? AND key = ?",
      entry.scope,
      entry.scope_id,
      entry.key,
    );
    if (existing) {
      this.#sql
        .stmt("UPDATE memory SET value = ?, expires_at = ?, updated_at = ? WHERE id = ?")
        .run(value, entry.expires_at, entry.at, existing.id as string);
    } else {
      for (;;) {
        const id = newId("memory");
        const inserted = this.#sql
          .stmt(
            `INSERT INTO memory (id, scope, scope_id, key, value, expires_at, created_at, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
          )
          .run(id, entry.scope, entry.scope_id, entry.key, value, entry.expires_at, entry.at, entry.at);
        if (inserted.changes === 1) break;
      }
    }
    return toMemory(
      this.#sql.get(
        "SELECT * FROM memory WHERE scope = ? AND scope_id = ? AND key = ?",
        entry.scope,
        entry.scope_id,
        entry.key,
      )!,
    );
  }

  async memoryDelete(scope: MemoryScope, scopeId: string, key: string): Promise<string | undefined> {
    const row = this.#sql.get(
      "DELETE FROM memory WHERE scope = ? AND scope_id = ? AND key = ? RETURNING id",
      scope,
      scopeId,
      key,
    );
    return row?.id as string | undefined;
  }

  async memorySweep(now: string): Promise<number> {
    return this.#sql.stmt("DELETE FROM memory WHERE expires_at IS NOT NULL AND expires_at <= ?").run(now).changes;
  }

  async eventsForTasks(
    taskIds: readonly string[],
    afterSeq: number,
    limit: number,
  ): Promise<{ total: number; events: ArbeitEvent[] }> {
    if (taskIds.length === 0) return { total: 0, events: [] };
    const marks = taskIds.map(() => "?").join(", ");
    const total = Number(
      this.#sql.get(`SELECT COUNT(*) AS n FROM events WHERE task_id IN (${marks}) AND seq > ?`, ...taskIds, afterSeq)
        ?.n ?? 0,
    );
    const events = this.#sql
      .all(
        `SELECT * FROM events WHERE task_id IN (${marks}) AND seq > ? ORDER BY seq DESC LIMIT ?`,
        ...taskIds,
        afterSeq,
        limit,
      )
      .map(toEvent)
      .reverse();
    return { total, events };
  }

  // ---- graph analysis ------------------------------------------------------------------------

  #scope(
    filter: { list_id?: string; under?: string },
    alias: string,
  ): { clause: string; params: SqlValue[]; cte: string } {
    const parts: string[] = [];
    const params: SqlValue[] = [];
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
    // open_edge is kept by triggers (migration 0002): both ends live and unfinished.
    const open = `r.type = 'blocks' AND r.removed_at IS NULL AND r.open_edge = 1`;
    if (filter.list_id === undefined && filter.under === undefined) {
      return this.#sql
        .all(
          `SELECT r.from_task_id AS a, r.to_task_id AS b FROM relationships r INDEXED BY idx_relationships_open_blocks WHERE ${open}`,
        )
        .map((row) => [row.a as string, row.b as string]);
    }
    const from = this.#scope(filter, "f");
    const to = this.#scope(filter, "t");
    const head: SqlValue[] = filter.under !== undefined ? [filter.under] : [];
    const rows = this.#sql.all(
      `${from.cte}SELECT r.from_task_id AS a, r.to_task_id AS b FROM relationships r INDEXED BY idx_relationships_open_blocks
       JOIN tasks f ON f.id = r.from_task_id JOIN tasks t ON t.id = r.to_task_id
       WHERE ${open} ${from.clause} ${to.clause}`,
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
    const head: SqlValue[] = filter.under !== undefined ? [filter.under] : [];
    const openEdgeInto = (
      alias: string,
    ) => `EXISTS (SELECT 1 FROM relationships r INDEXED BY idx_relationships_open_blocks
        WHERE r.to_task_id = ${alias}.id AND r.type = 'blocks' AND r.removed_at IS NULL AND r.open_edge = 1)`;
    let total: number;
    if (filter.list_id === undefined && filter.under === undefined) {
      // Whole store: unfinished tasks less those an open edge points into, two index-only counts
      // rather than a probe per task.
      const unfinished = Number(
        this.#sql.get(`SELECT COUNT(*) AS n FROM tasks INDEXED BY idx_tasks_list_status
          WHERE deleted_at IS NULL AND status IN ${UNFINISHED}`)?.n ?? 0,
      );
      const blocked = Number(
        this.#sql.get(`SELECT COUNT(DISTINCT to_task_id) AS n FROM relationships INDEXED BY idx_relationships_open_blocks
          WHERE type = 'blocks' AND removed_at IS NULL AND open_edge = 1`)?.n ?? 0,
      );
      total = unfinished - blocked;
    } else {
      total = Number(
        this.#sql.get(
          `${scope.cte}SELECT COUNT(*) AS n FROM tasks t
           WHERE t.deleted_at IS NULL AND t.status IN ${UNFINISHED} ${scope.clause} AND NOT ${openEdgeInto("t")}`,
          ...head,
          ...scope.params,
        )?.n ?? 0,
      );
    }
    // The tasks shown are the best of them to start now: open and unclaimed, in ready order.
    const tasks = this.#sql
      .all(
        `${scope.cte}SELECT ${TASK_COLUMNS} FROM tasks t INDEXED BY idx_tasks_ready_free
         WHERE t.deleted_at IS NULL AND t.status = 'open' AND t.lease_expires_at IS NULL ${scope.clause}
           AND NOT ${openEdgeInto("t")}
         ORDER BY ${TASK_ORDER} LIMIT ?`,
        ...head,
        ...scope.params,
        filter.limit,
      )
      .map(toTask);
    return { total, tasks };
  }
}
