import type { FileAssociation, FileOperation, SessionLink, Task } from "../../domain/types.js";
import { toFile, toSessionLink, toTask } from "../rows.js";
import type { ActiveWork, SessionStart } from "../task-store.js";
import type { SqlDb } from "./database.js";
import { type Dialect, perDialect } from "./dialect.js";
import { insertWithId } from "./insert.js";
import { taskColumns } from "./task-columns.js";

const LINK_OF = "SELECT id FROM session_links WHERE task_id = ? AND session_id = ?";
const LINKS_OF_TASK = "SELECT * FROM session_links WHERE task_id = ? ORDER BY rowid";
const ACTIVE =
  "SELECT session_id, task_id, agent, started_at FROM active_work WHERE session_id = ? AND stopped_at IS NULL";
const START = "INSERT INTO active_work (session_id, task_id, agent, started_at) VALUES (?, ?, ?, ?)";
const STOP = "UPDATE active_work SET stopped_at = ? WHERE session_id = ? AND stopped_at IS NULL";
const WORKING_ON = `SELECT session_id, task_id, agent, started_at FROM active_work
  WHERE task_id = ? AND stopped_at IS NULL ORDER BY started_at, session_id`;
const STOP_ON = "UPDATE active_work SET stopped_at = ? WHERE task_id = ? AND stopped_at IS NULL";
const LAST_WORKED = `SELECT w.task_id FROM active_work w JOIN tasks t ON t.id = w.task_id
  WHERE w.session_id = ? AND t.deleted_at IS NULL ORDER BY w.started_at DESC, w.rowid DESC LIMIT 1`;
const FILE_SEEN =
  "SELECT id FROM file_associations WHERE task_id = ? AND file_path = ? AND operation = ? AND session_id = ?";
const FILES_OF_TASK = "SELECT * FROM file_associations WHERE task_id = ? ORDER BY rowid";
const COUNT_FILES = `SELECT COUNT(DISTINCT file_path) AS n FROM file_associations
  WHERE task_id = ? AND session_id = ? AND created_at >= ?`;

const tasksForFile = (d: Dialect, after: string) => `SELECT ${taskColumns(d)}, f.operations, f.last_at FROM (
      SELECT task_id, ${d.joinDistinct("operation")} AS operations, MAX(created_at) AS last_at
      FROM file_associations WHERE file_path = ? GROUP BY task_id
    ) f JOIN tasks t ON t.id = f.task_id
    WHERE t.deleted_at IS NULL ${after} ORDER BY f.last_at DESC, t.id LIMIT ?`;

const ACTIVE_FILE_SEEN = `SELECT w.task_id, EXISTS (SELECT 1 FROM file_associations f
    WHERE f.task_id = w.task_id AND f.file_path = ? AND f.operation = ? AND f.session_id = w.session_id) AS seen
  FROM active_work w WHERE w.session_id = ? AND w.stopped_at IS NULL`;

const texts = perDialect((d) => ({
  // Where a session's resume starts, one row each: its state (with the focus it names), its live
  // work and the task it last started work on, each with its task's row when the task is live.
  sessionStart: `SELECT c.role, c.id AS candidate_id, c.state_agent, c.cursor_seq, c.state_updated_at,
      ${taskColumns(d)} FROM (
      SELECT 'state' AS role, s.focus_task_id AS id, s.agent AS state_agent, s.cursor_seq,
        s.updated_at AS state_updated_at FROM session_state s WHERE s.session_id = ?
      UNION ALL SELECT 'working', w.task_id, NULL, NULL, NULL FROM active_work w
        WHERE w.session_id = ? AND w.stopped_at IS NULL
      UNION ALL SELECT 'last', lw.task_id, NULL, NULL, NULL FROM (${LAST_WORKED}) lw
    ) c LEFT JOIN tasks t ON t.id = c.id AND t.deleted_at IS NULL`,
  tasksForFile: tasksForFile(d, ""),
  // Newest first, then by id: the next page is older, or as old with a later id.
  tasksForFileAfter: tasksForFile(d, "AND (f.last_at < ? OR (f.last_at = ? AND t.id > ?))"),
}));

/** Sessions linked to tasks, the work each session is doing, and the files it touched. */
export function workStatements(db: SqlDb) {
  const sql = texts(db.dialect);
  return {
    async linkSession(link: Omit<SessionLink, "id">): Promise<{ id: string; created: boolean }> {
      const existing = await db.get(LINK_OF, link.task_id, link.session_id);
      if (existing) return { id: existing.id as string, created: false };
      const id = await insertWithId(
        db,
        "session",
        "session_links",
        ["task_id", "session_id", "agent", "created_at"],
        [link.task_id, link.session_id, link.agent, link.created_at],
      );
      return { id, created: true };
    },

    async sessionsOf(taskId: string): Promise<SessionLink[]> {
      return (await db.all(LINKS_OF_TASK, taskId)).map(toSessionLink);
    },

    async activeWork(sessionId: string): Promise<ActiveWork | undefined> {
      return (await db.get(ACTIVE, sessionId)) as ActiveWork | undefined;
    },

    async startActiveWork(work: ActiveWork): Promise<void> {
      db.later(START, work.session_id, work.task_id, work.agent, work.started_at);
    },

    async stopActiveWork(sessionId: string, at: string): Promise<void> {
      db.later(STOP, at, sessionId);
    },

    /** Every session working on the task now, longest first. */
    async workingOn(taskId: string): Promise<ActiveWork[]> {
      return (await db.all(WORKING_ON, taskId)) as unknown as ActiveWork[];
    },

    /** Ends every session's work on the task. */
    async stopWorkOn(taskId: string, at: string): Promise<void> {
      db.later(STOP_ON, at, taskId);
    },

    /** The live task the session most recently started work on, whether or not it still is. */
    async lastWorkedTask(sessionId: string): Promise<string | undefined> {
      return (await db.get(LAST_WORKED, sessionId))?.task_id as string | undefined;
    },

    /** Inserts the association unless the same task, path, operation and session is recorded. */
    async insertFileAssociation(file: Omit<FileAssociation, "id">, seen?: boolean): Promise<string | undefined> {
      const known =
        seen ?? (await db.get(FILE_SEEN, file.task_id, file.file_path, file.operation, file.session_id)) !== undefined;
      if (known) return undefined;
      return insertWithId(
        db,
        "file",
        "file_associations",
        ["task_id", "file_path", "operation", "session_id", "created_at"],
        [file.task_id, file.file_path, file.operation, file.session_id, file.created_at],
      );
    },

    async activeFileSeen(
      sessionId: string,
      path: string,
      operation: FileOperation,
    ): Promise<{ task_id: string; seen: boolean } | undefined> {
      const row = await db.get(ACTIVE_FILE_SEEN, path, operation, sessionId);
      // SQLite answers EXISTS as 0 or 1, Postgres as a boolean.
      return row ? { task_id: row.task_id as string, seen: Boolean(Number(row.seen)) } : undefined;
    },

    /** Where a session's resume starts (see StoreTx.sessionStart). */
    async sessionStart(session: string): Promise<SessionStart> {
      const rows = await db.all(sql.sessionStart, session, session, session);
      const start: SessionStart = { state: undefined, working: undefined, last: undefined, tasks: new Map() };
      for (const row of rows) {
        const id = (row.candidate_id as string | null) ?? null;
        if (row.role === "state") {
          start.state = {
            session_id: session,
            agent: (row.state_agent as string | null) ?? null,
            cursor_seq: Number(row.cursor_seq),
            focus_task_id: id,
            updated_at: String(row.state_updated_at),
          };
        } else if (row.role === "working") start.working = id ?? undefined;
        else start.last = id ?? undefined;
        if (id !== null) start.tasks.set(id, row.id == null ? undefined : toTask(row));
      }
      return start;
    },

    async filesOf(taskId: string): Promise<FileAssociation[]> {
      return (await db.all(FILES_OF_TASK, taskId)).map(toFile);
    },

    async countFiles(taskId: string, sessionId: string, since: string): Promise<number> {
      return Number((await db.get(COUNT_FILES, taskId, sessionId, since))?.n ?? 0);
    },

    async tasksForFile(
      path: string,
      limit: number,
      after?: readonly [string, string],
    ): Promise<Array<{ task: Task; operations: FileOperation[]; last_at: string }>> {
      const rows = after
        ? await db.all(sql.tasksForFileAfter, path, after[0], after[0], after[1], limit)
        : await db.all(sql.tasksForFile, path, limit);
      return rows.map((row) => ({
        task: toTask(row),
        operations: (row.operations as string).split(",").sort() as FileOperation[],
        last_at: row.last_at as string,
      }));
    },
  };
}
