import { type IdKind, newId } from "../../domain/ids.js";
import type {
  ArbeitEvent,
  ContextEntry,
  FileAssociation,
  FileOperation,
  ProgressItem,
  Relationship,
  RelationshipType,
  SessionLink,
  Task,
  TaskStatus,
} from "../../domain/types.js";
import { linkedTasksSql } from "../linked-sql.js";
import {
  type RawRow,
  toContext,
  toEvent,
  toFile,
  toProgress,
  toRelationship,
  toRelationshipRow,
  toSessionLink,
  toTask,
} from "../rows.js";
import type {
  ActiveWork,
  EventFilter,
  NewEvent,
  NewTask,
  RelationshipRow,
  TaskFilter,
  TaskPatch,
} from "../task-store.js";
import { newTaskRow } from "../task-store.js";
import type { SqlDriver, SqlStatement, SqlValue } from "./driver.js";
import { StatementCache } from "./statement-cache.js";
import { blockedExpression, isBlockingExpression, TASK_COLUMNS, TASK_ORDER } from "./task-sql.js";

const PROJECTION = { columns: TASK_COLUMNS, order: TASK_ORDER };

const MAX_TREE_DEPTH = 16;

function json(value: Record<string, unknown> | null): string | null {
  return value === null ? null : JSON.stringify(value);
}

function placeholders(count: number): string {
  return Array.from({ length: count }, () => "?").join(", ");
}

/** The SQLite implementation of the store contract, over one driver connection. */
/** Tasks, graph, context, progress, work, files and events; SqliteAgentTx adds the v2 tables. */
export class SqliteTx {
  readonly #sql: StatementCache;

  constructor(driver: SqlDriver) {
    this.#sql = new StatementCache(driver);
  }

  #stmt(sql: string): SqlStatement {
    return this.#sql.stmt(sql);
  }

  #all(sql: string, ...params: SqlValue[]): RawRow[] {
    return this.#sql.all(sql, ...params);
  }

  #get(sql: string, ...params: SqlValue[]): RawRow | undefined {
    return this.#sql.get(sql, ...params);
  }

  /** Inserts with a fresh random id, drawing again on the rare clash. */
  #insertWithId(kind: IdKind, table: string, columns: string[], values: SqlValue[]): string {
    const sql = `INSERT INTO ${table} (id, ${columns.join(", ")}) VALUES (?, ${placeholders(columns.length)})
      ON CONFLICT (id) DO NOTHING`;
    for (;;) {
      const id = newId(kind);
      if (this.#stmt(sql).run(id, ...values).changes === 1) return id;
    }
  }

  // ---- tasks -------------------------------------------------------------------------------

  async getTask(id: string): Promise<Task | undefined> {
    const row = this.#get(`SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.id = ? AND t.deleted_at IS NULL`, id);
    return row ? toTask(row) : undefined;
  }

  async getTasks(ids: readonly string[]): Promise<Task[]> {
    if (ids.length === 0) return [];
    const rows = this.#all(
      `SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.id IN (${placeholders(ids.length)}) AND t.deleted_at IS NULL
       ORDER BY ${TASK_ORDER}`,
      ...ids,
    );
    return rows.map(toTask);
  }

  async taskExists(id: string): Promise<{ exists: boolean; deleted: boolean }> {
    const row = this.#get("SELECT deleted_at FROM tasks WHERE id = ?", id);
    return { exists: row !== undefined, deleted: row !== undefined && row.deleted_at !== null };
  }

  async insertTask(task: NewTask): Promise<string> {
    const row = newTaskRow(task);
    return this.#insertWithId("task", "tasks", row.columns, row.values);
  }

  async updateTask(id: string, patch: TaskPatch, updatedAt: string): Promise<void> {
    const columns = Object.keys(patch).filter((key) => patch[key as keyof TaskPatch] !== undefined) as Array<
      keyof TaskPatch
    >;
    const assignments = columns.map((column) => `${column} = ?`);
    const values = columns.map((column) => (patch[column] ?? null) as SqlValue);
    this.#stmt(
      `UPDATE tasks SET ${[...assignments, "version = version + 1", "updated_at = ?"].join(", ")} WHERE id = ?`,
    ).run(...values, updatedAt, id);
  }

  async touchTask(id: string, updatedAt: string): Promise<void> {
    this.#stmt("UPDATE tasks SET version = version + 1, updated_at = ? WHERE id = ?").run(updatedAt, id);
  }

  async softDeleteTask(id: string, at: string): Promise<void> {
    this.#stmt("UPDATE tasks SET deleted_at = ?, updated_at = ?, version = version + 1 WHERE id = ?").run(at, at, id);
  }

  async listTasks(filter: TaskFilter): Promise<Task[]> {
    const where = ["t.deleted_at IS NULL"];
    const params: SqlValue[] = [];
    if (filter.list_id !== undefined) {
      where.push("t.list_id = ?");
      params.push(filter.list_id);
    }
    if (filter.statuses && filter.statuses.length > 0) {
      where.push(`t.status IN (${placeholders(filter.statuses.length)})`);
      params.push(...filter.statuses);
    }
    if (filter.type !== undefined) {
      where.push("t.type = ?");
      params.push(filter.type);
    }
    if (filter.owner !== undefined) {
      where.push("t.owner = ?");
      params.push(filter.owner);
    }
    if (filter.parent_id === null) {
      where.push(`NOT EXISTS (SELECT 1 FROM relationships r JOIN tasks p ON p.id = r.from_task_id
        WHERE r.to_task_id = t.id AND r.type = 'parent_of' AND r.removed_at IS NULL AND p.deleted_at IS NULL)`);
    } else if (filter.parent_id !== undefined) {
      where.push(`EXISTS (SELECT 1 FROM relationships r
        WHERE r.to_task_id = t.id AND r.from_task_id = ? AND r.type = 'parent_of' AND r.removed_at IS NULL)`);
      params.push(filter.parent_id);
    }
    const rows = this.#all(
      `SELECT ${TASK_COLUMNS} FROM tasks t WHERE ${where.join(" AND ")} ORDER BY ${TASK_ORDER} LIMIT ? OFFSET ?`,
      ...params,
      filter.limit,
      filter.offset,
    );
    return rows.map(toTask);
  }

  async readyTasks(filter: { list_id?: string; now: string; limit: number; offset: number }): Promise<Task[]> {
    // Two ordered sources merged (SQLite merges a compound ORDER BY and stops at the LIMIT):
    // unleased open tasks in priority order, and the few whose lease has run out. Claimed tasks
    // are in neither index, so a busy project does not make every claim skip past all of them.
    const listClause = filter.list_id === undefined ? "" : "AND t.list_id = ?";
    const list: SqlValue[] = filter.list_id === undefined ? [] : [filter.list_id];
    const unblocked = `NOT EXISTS (SELECT 1 FROM relationships r INDEXED BY idx_relationships_open_blocks
      WHERE r.to_task_id = t.id AND r.type = 'blocks' AND r.removed_at IS NULL AND r.open_edge = 1)`;
    const rows = this.#all(
      `SELECT ${TASK_COLUMNS} FROM tasks t INDEXED BY idx_tasks_ready_free
       WHERE t.deleted_at IS NULL AND t.status = 'open' AND t.lease_expires_at IS NULL ${listClause} AND ${unblocked}
       UNION ALL
       SELECT ${TASK_COLUMNS} FROM tasks t INDEXED BY idx_tasks_lease
       WHERE t.deleted_at IS NULL AND t.status = 'open' AND t.lease_expires_at IS NOT NULL
         AND t.lease_expires_at <= ? ${listClause} AND ${unblocked}
       ORDER BY priority, created_at, id LIMIT ? OFFSET ?`,
      ...list,
      filter.now,
      ...list,
      filter.limit,
      filter.offset,
    );
    return rows.map(toTask);
  }

  #statusFiltered(
    condition: string,
    filter: { list_id?: string; statuses?: TaskStatus[]; limit: number; offset: number },
  ): Task[] {
    const where = ["t.deleted_at IS NULL", condition];
    const params: SqlValue[] = [];
    if (filter.list_id !== undefined) {
      where.push("t.list_id = ?");
      params.push(filter.list_id);
    }
    if (filter.statuses && filter.statuses.length > 0) {
      where.push(`t.status IN (${placeholders(filter.statuses.length)})`);
      params.push(...filter.statuses);
    }
    return this.#all(
      `SELECT ${TASK_COLUMNS} FROM tasks t WHERE ${where.join(" AND ")} ORDER BY ${TASK_ORDER} LIMIT ? OFFSET ?`,
      ...params,
      filter.limit,
      filter.offset,
    ).map(toTask);
  }

  async blockedTasks(filter: {
    list_id?: string;
    statuses?: TaskStatus[];
    limit: number;
    offset: number;
  }): Promise<Task[]> {
    return this.#statusFiltered(blockedExpression("t"), filter);
  }

  async blockingTasks(filter: {
    list_id?: string;
    statuses?: TaskStatus[];
    limit: number;
    offset: number;
  }): Promise<Task[]> {
    return this.#statusFiltered(`t.status IN ('open', 'in_progress') AND ${isBlockingExpression("t")}`, filter);
  }

  async staleTasks(filter: {
    list_id?: string;
    updated_before: string;
    limit: number;
    offset: number;
  }): Promise<Task[]> {
    const listClause = filter.list_id === undefined ? "" : "AND t.list_id = ?";
    return this.#all(
      `SELECT ${TASK_COLUMNS} FROM tasks t
       WHERE t.deleted_at IS NULL AND t.status IN ('open', 'in_progress') ${listClause}
         AND MAX(t.updated_at, COALESCE((SELECT MAX(e.timestamp) FROM events e WHERE e.task_id = t.id), '')) < ?
       ORDER BY t.updated_at, t.id LIMIT ? OFFSET ?`,
      ...(filter.list_id === undefined ? [] : [filter.list_id]),
      filter.updated_before,
      filter.limit,
      filter.offset,
    ).map(toTask);
  }

  // ---- hierarchy and dependencies -----------------------------------------------------------

  async children(id: string): Promise<Task[]> {
    return this.#all(linkedTasksSql(PROJECTION, "parent_of", "out"), id).map(toTask);
  }

  async ancestors(id: string): Promise<Task[]> {
    return this.#all(
      `WITH RECURSIVE up(id, distance) AS (
         SELECT from_task_id, 1 FROM relationships
           WHERE to_task_id = ? AND type = 'parent_of' AND removed_at IS NULL
         UNION ALL
         SELECT r.from_task_id, up.distance + 1 FROM up CROSS JOIN relationships r ON r.to_task_id = up.id
           WHERE r.type = 'parent_of' AND r.removed_at IS NULL AND up.distance < ${MAX_TREE_DEPTH}
       )
       SELECT ${TASK_COLUMNS} FROM up CROSS JOIN tasks t ON t.id = up.id WHERE t.deleted_at IS NULL
       ORDER BY up.distance`,
      id,
    ).map(toTask);
  }

  async descendants(id: string, limit: number): Promise<Array<Task & { depth: number }>> {
    return this.#all(
      `WITH RECURSIVE down(id, depth) AS (
         SELECT to_task_id, 1 FROM relationships
           WHERE from_task_id = ? AND type = 'parent_of' AND removed_at IS NULL
         UNION ALL
         SELECT r.to_task_id, down.depth + 1 FROM down CROSS JOIN relationships r ON r.from_task_id = down.id
           WHERE r.type = 'parent_of' AND r.removed_at IS NULL AND down.depth < ${MAX_TREE_DEPTH}
       )
       SELECT ${TASK_COLUMNS}, down.depth AS depth FROM down CROSS JOIN tasks t ON t.id = down.id
       WHERE t.deleted_at IS NULL ORDER BY down.depth, ${TASK_ORDER} LIMIT ?`,
      id,
      limit,
    ).map((row) => ({ ...toTask(row), depth: Number(row.depth) }));
  }

  async level(id: string): Promise<number> {
    const row = this.#get(
      `WITH RECURSIVE up(id, distance) AS (
         SELECT ?, 0
         UNION ALL
         SELECT r.from_task_id, up.distance + 1 FROM up CROSS JOIN relationships r ON r.to_task_id = up.id
           WHERE r.type = 'parent_of' AND r.removed_at IS NULL AND up.distance < ${MAX_TREE_DEPTH}
       )
       SELECT MAX(distance) AS distance FROM up`,
      id,
    );
    return Number(row?.distance ?? 0) + 1;
  }

  async subtreeHeight(id: string): Promise<number> {
    const row = this.#get(
      `WITH RECURSIVE down(id, depth) AS (
         SELECT ?, 0
         UNION ALL
         SELECT r.to_task_id, down.depth + 1 FROM down CROSS JOIN relationships r ON r.from_task_id = down.id
           CROSS JOIN tasks c ON c.id = r.to_task_id
           WHERE r.type = 'parent_of' AND r.removed_at IS NULL AND c.deleted_at IS NULL
             AND down.depth < ${MAX_TREE_DEPTH}
       )
       SELECT MAX(depth) AS depth FROM down`,
      id,
    );
    return Number(row?.depth ?? 0) + 1;
  }

  async blockers(id: string): Promise<Task[]> {
    return this.#all(linkedTasksSql(PROJECTION, "blocks", "in"), id).map(toTask);
  }

  async blocking(id: string): Promise<Task[]> {
    return this.#all(linkedTasksSql(PROJECTION, "blocks", "out"), id).map(toTask);
  }

  async reaches(from: string, target: string, type: "blocks" | "parent_of"): Promise<boolean> {
    // UNION (not UNION ALL) keeps each task once, so an existing cycle cannot loop forever.
    // Deleted tasks are out of the graph: a path through one is no path.
    // CROSS JOIN (here and in the other walks) keeps the walk's frontier as the outer loop. The
    // planner has no statistics and otherwise prefers idx_relationships_type (type=?), reading
    // every edge of the type at each step: seconds on a 5,000-long chain (bench/plans.ts).
    // The deleted check looks in idx_tasks_deleted, which holds deleted tasks only; left to
    // itself the planner reads the task's row through the primary key, 40% slower.
    const row = this.#get(
      `WITH RECURSIVE reach(id) AS (
         SELECT ?
         UNION
         SELECT r.to_task_id FROM reach CROSS JOIN relationships r ON r.from_task_id = reach.id
           WHERE r.type = ? AND r.removed_at IS NULL
             AND NOT EXISTS (SELECT 1 FROM tasks n INDEXED BY idx_tasks_deleted
                             WHERE n.id = r.to_task_id AND n.deleted_at IS NOT NULL)
       )
       SELECT 1 AS found FROM reach WHERE id = ? LIMIT 1`,
      from,
      type,
      target,
    );
    return row !== undefined;
  }

  // ---- relationships -------------------------------------------------------------------------

  async findRelationship(from: string, to: string, type: RelationshipType): Promise<Relationship | undefined> {
    const row = this.#get(
      `SELECT * FROM relationships
       WHERE from_task_id = ? AND type = ? AND to_task_id = ? AND removed_at IS NULL`,
      from,
      type,
      to,
    );
    return row ? toRelationship(row) : undefined;
  }

  async relationshipsOf(taskId: string): Promise<RelationshipRow[]> {
    return this.#all(
      `SELECT r.*, (o.deleted_at IS NOT NULL) AS other_deleted FROM relationships r
         JOIN tasks o ON o.id = r.to_task_id
         WHERE r.from_task_id = ? AND r.removed_at IS NULL
       UNION ALL
       SELECT r.*, (o.deleted_at IS NOT NULL) AS other_deleted FROM relationships r
         JOIN tasks o ON o.id = r.from_task_id
         WHERE r.to_task_id = ? AND r.removed_at IS NULL AND r.from_task_id <> r.to_task_id
       ORDER BY created_at, id`,
      taskId,
      taskId,
    ).map(toRelationshipRow);
  }

  async insertRelationship(rel: Omit<Relationship, "id">): Promise<string> {
    return this.#insertWithId(
      "relationship",
      "relationships",
      ["from_task_id", "to_task_id", "type", "metadata", "created_at"],
      [rel.from_task_id, rel.to_task_id, rel.type, json(rel.metadata), rel.created_at],
    );
  }

  async removeRelationship(id: string, at: string): Promise<void> {
    this.#stmt("UPDATE relationships SET removed_at = ? WHERE id = ? AND removed_at IS NULL").run(at, id);
  }

  // ---- context -------------------------------------------------------------------------------

  async insertContext(entry: Omit<ContextEntry, "id" | "superseded_by">): Promise<string> {
    return this.#insertWithId(
      "context",
      "context_entries",
      ["task_id", "type", "content", "metadata", "created_at"],
      [entry.task_id, entry.type, entry.content, json(entry.metadata), entry.created_at],
    );
  }

  async getContext(id: string): Promise<ContextEntry | undefined> {
    const row = this.#get("SELECT * FROM context_entries WHERE id = ?", id);
    return row ? toContext(row) : undefined;
  }

  async markSuperseded(id: string, by: string): Promise<boolean> {
    return (
      this.#stmt("UPDATE context_entries SET superseded_by = ? WHERE id = ? AND superseded_by IS NULL").run(by, id)
        .changes === 1
    );
  }

  async contextOf(taskId: string, includeSuperseded: boolean): Promise<ContextEntry[]> {
    const filter = includeSuperseded ? "" : "AND superseded_by IS NULL";
    return this.#all(`SELECT * FROM context_entries WHERE task_id = ? ${filter} ORDER BY rowid`, taskId).map(toContext);
  }

  async recentContext(filter: {
    since: string;
    task_id?: string;
    list_id?: string;
    limit: number;
  }): Promise<ContextEntry[]> {
    const { clause, params } = recentFilter(filter);
    return this.#all(
      `SELECT c.* FROM context_entries c JOIN tasks t ON t.id = c.task_id
       WHERE c.created_at >= ? AND t.deleted_at IS NULL ${clause}
       ORDER BY c.created_at DESC, c.rowid DESC LIMIT ?`,
      filter.since,
      ...params,
      filter.limit,
    ).map(toContext);
  }

  // ---- progress ------------------------------------------------------------------------------

  async insertProgress(item: {
    task_id: string;
    content: string;
    completed: boolean;
    created_at: string;
  }): Promise<string> {
    return this.#insertWithId(
      "progress",
      "progress_items",
      ["task_id", "content", "completed", "created_at", "completed_at"],
      [item.task_id, item.content, item.completed ? 1 : 0, item.created_at, item.completed ? item.created_at : null],
    );
  }

  async getProgressItems(ids: readonly string[]): Promise<ProgressItem[]> {
    if (ids.length === 0) return [];
    return this.#all(`SELECT * FROM progress_items WHERE id IN (${placeholders(ids.length)})`, ...ids).map(toProgress);
  }

  async completeProgress(ids: readonly string[], at: string): Promise<void> {
    if (ids.length === 0) return;
    this.#stmt(
      `UPDATE progress_items SET completed = 1, completed_at = ?
       WHERE id IN (${placeholders(ids.length)}) AND completed = 0`,
    ).run(at, ...ids);
  }

  async progressOf(taskId: string): Promise<ProgressItem[]> {
    return this.#all("SELECT * FROM progress_items WHERE task_id = ? ORDER BY rowid", taskId).map(toProgress);
  }

  async recentProgress(filter: {
    since: string;
    task_id?: string;
    list_id?: string;
    limit: number;
  }): Promise<ProgressItem[]> {
    const { clause, params } = recentFilter(filter);
    return this.#all(
      `SELECT p.* FROM progress_items p JOIN tasks t ON t.id = p.task_id
       WHERE (p.created_at >= ? OR p.completed_at >= ?) AND t.deleted_at IS NULL ${clause}
       ORDER BY COALESCE(p.completed_at, p.created_at) DESC, p.rowid DESC LIMIT ?`,
      filter.since,
      filter.since,
      ...params,
      filter.limit,
    ).map(toProgress);
  }

  // ---- sessions, active work, files ----------------------------------------------------------

  async linkSession(link: Omit<SessionLink, "id">): Promise<{ id: string; created: boolean }> {
    const existing = this.#get(
      "SELECT id FROM session_links WHERE task_id = ? AND session_id = ?",
      link.task_id,
      link.session_id,
    );
    if (existing) return { id: existing.id as string, created: false };
    const id = this.#insertWithId(
      "session",
      "session_links",
      ["task_id", "session_id", "agent", "created_at"],
      [link.task_id, link.session_id, link.agent, link.created_at],
    );
    return { id, created: true };
  }

  async sessionsOf(taskId: string): Promise<SessionLink[]> {
    return this.#all("SELECT * FROM session_links WHERE task_id = ? ORDER BY rowid", taskId).map(toSessionLink);
  }

  async activeWork(sessionId: string): Promise<ActiveWork | undefined> {
    const row = this.#get(
      "SELECT session_id, task_id, agent, started_at FROM active_work WHERE session_id = ? AND stopped_at IS NULL",
      sessionId,
    );
    return row as ActiveWork | undefined;
  }

  async startActiveWork(work: ActiveWork): Promise<void> {
    this.#stmt("INSERT INTO active_work (session_id, task_id, agent, started_at) VALUES (?, ?, ?, ?)").run(
      work.session_id,
      work.task_id,
      work.agent,
      work.started_at,
    );
  }

  async stopActiveWork(sessionId: string, at: string): Promise<void> {
    this.#stmt("UPDATE active_work SET stopped_at = ? WHERE session_id = ? AND stopped_at IS NULL").run(at, sessionId);
  }

  async lastWorkedTask(sessionId: string): Promise<string | undefined> {
    const row = this.#get(
      `SELECT w.task_id FROM active_work w JOIN tasks t ON t.id = w.task_id
       WHERE w.session_id = ? AND t.deleted_at IS NULL ORDER BY w.started_at DESC, w.rowid DESC LIMIT 1`,
      sessionId,
    );
    return row?.task_id as string | undefined;
  }

  async insertFileAssociation(file: Omit<FileAssociation, "id">): Promise<string | undefined> {
    const existing = this.#get(
      "SELECT id FROM file_associations WHERE task_id = ? AND file_path = ? AND operation = ? AND session_id = ?",
      file.task_id,
      file.file_path,
      file.operation,
      file.session_id,
    );
    if (existing) return undefined;
    return this.#insertWithId(
      "file",
      "file_associations",
      ["task_id", "file_path", "operation", "session_id", "created_at"],
      [file.task_id, file.file_path, file.operation, file.session_id, file.created_at],
    );
  }

  async filesOf(taskId: string): Promise<FileAssociation[]> {
    return this.#all("SELECT * FROM file_associations WHERE task_id = ? ORDER BY rowid", taskId).map(toFile);
  }

  async countFiles(taskId: string, sessionId: string, since: string): Promise<number> {
    const row = this.#get(
      `SELECT COUNT(DISTINCT file_path) AS n FROM file_associations
       WHERE task_id = ? AND session_id = ? AND created_at >= ?`,
      taskId,
      sessionId,
      since,
    );
    return Number(row?.n ?? 0);
  }

  async tasksForFile(
    path: string,
    limit: number,
  ): Promise<Array<{ task: Task; operations: FileOperation[]; last_at: string }>> {
    const rows = this.#all(
      `SELECT ${TASK_COLUMNS}, f.operations, f.last_at FROM (
         SELECT task_id, group_concat(DISTINCT operation) AS operations, MAX(created_at) AS last_at
         FROM file_associations WHERE file_path = ? GROUP BY task_id
       ) f JOIN tasks t ON t.id = f.task_id
       WHERE t.deleted_at IS NULL ORDER BY f.last_at DESC, t.id LIMIT ?`,
      path,
      limit,
    );
    return rows.map((row) => ({
      task: toTask(row),
      operations: (row.operations as string).split(",").sort() as FileOperation[],
      last_at: row.last_at as string,
    }));
  }

  // ---- events --------------------------------------------------------------------------------

  async appendEvent(event: NewEvent): Promise<ArbeitEvent> {
    const payload = JSON.stringify(event.payload);
    for (;;) {
      const id = newId("event");
      const row = this.#get(
        `INSERT INTO events (id, timestamp, event_type, entity_type, entity_id, task_id, payload, session_id, agent)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING RETURNING seq`,
        id,
        event.timestamp,
        event.event_type,
        event.entity_type,
        event.entity_id,
        event.task_id,
        payload,
        event.session_id,
        event.agent,
      );
      if (row !== undefined) return { ...event, id, seq: Number(row.seq) };
    }
  }

  async recentEvents(taskId: string, limit: number): Promise<ArbeitEvent[]> {
    return this.#all("SELECT * FROM events WHERE task_id = ? ORDER BY seq DESC LIMIT ?", taskId, limit)
      .map(toEvent)
      .reverse();
  }

  async listEvents(filter: EventFilter): Promise<ArbeitEvent[]> {
    const where = ["seq > ?"];
    const params: SqlValue[] = [filter.after_seq];
    if (filter.task_id !== undefined) {
      where.push("task_id = ?");
      params.push(filter.task_id);
    }
    if (filter.event_types && filter.event_types.length > 0) {
      where.push(`event_type IN (${placeholders(filter.event_types.length)})`);
      params.push(...filter.event_types);
    }
    return this.#all(
      `SELECT * FROM events WHERE ${where.join(" AND ")} ORDER BY seq LIMIT ?`,
      ...params,
      filter.limit,
    ).map(toEvent);
  }
}

function recentFilter(filter: { task_id?: string; list_id?: string }): { clause: string; params: SqlValue[] } {
  const parts: string[] = [];
  const params: SqlValue[] = [];
  if (filter.task_id !== undefined) {
    parts.push("AND t.id = ?");
    params.push(filter.task_id);
  }
  if (filter.list_id !== undefined) {
    parts.push("AND t.list_id = ?");
    params.push(filter.list_id);
  }
  return { clause: parts.join(" "), params };
}
