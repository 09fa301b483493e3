import type {
  ArbeitEvent,
  CardField,
  ContextEntry,
  RiskLevel,
  Task,
  TaskStatus,
  TaskType,
} from "../../domain/types.js";
import { type RawRow, toContext, toEvent } from "../rows.js";
import type { SqlDb, SqlValue } from "./database.js";
import { perDialect } from "./dialect.js";
import { UNFINISHED } from "./task-columns.js";

/**
 * Whole-project reads for a person's overview (the dashboard): every task of a list at once with
 * what a card shows, the dependency edges among them, who is working, and the open questions.
 * Each is one statement, the same on both engines (the event log is searched in mission.ts).
 */

/** A card's task fields, with what its derived flags are computed from. */
export interface OverviewRow extends Pick<Task, CardField | "claim_session" | "lease_expires_at"> {
  open_children: number;
  progress_done: number;
  progress_total: number;
}

export interface WorkingRow {
  session_id: string;
  agent: string | null;
  task_id: string;
  title: string;
  started_at: string;
}

export interface ClaimRow {
  task_id: string;
  title: string;
  owner: string | null;
  session: string | null;
  until: string;
}

export interface QuestionRow {
  entry: ContextEntry;
  task: { id: string; title: string; status: TaskStatus; list_id: string; version: number };
  asked_by: { agent: string | null; session: string | null };
}

const byList = (listId: string | undefined, column: string): { clause: string; params: SqlValue[] } =>
  listId === undefined ? { clause: "", params: [] } : { clause: `AND ${column} = ?`, params: [listId] };

// One pass over each table, joined, rather than four subqueries per task: 10,000 tasks at once.
const TASKS = (list: string) => `WITH parents AS (
    SELECT r.to_task_id AS id, r.from_task_id AS parent_id FROM relationships r JOIN tasks p ON p.id = r.from_task_id
    WHERE r.type = 'parent_of' AND r.removed_at IS NULL AND p.deleted_at IS NULL),
  waiting AS (
    SELECT DISTINCT r.to_task_id AS id FROM relationships r JOIN tasks b ON b.id = r.from_task_id
    WHERE r.type = 'blocks' AND r.removed_at IS NULL AND b.deleted_at IS NULL AND b.status IN ${UNFINISHED}),
  progress AS (SELECT i.task_id, SUM(i.completed) AS done, COUNT(*) AS total FROM progress_items i GROUP BY i.task_id)
  SELECT t.id, t.list_id, t.title, t.type, t.status, t.priority, t.owner, t.risk, t.impact, t.version, t.created_at,
    t.updated_at, t.claim_session, t.lease_expires_at, t.open_children, pa.parent_id,
    CASE WHEN w.id IS NULL THEN 0 ELSE 1 END AS blocked,
    COALESCE(pr.done, 0) AS progress_done, COALESCE(pr.total, 0) AS progress_total
  FROM tasks t
  LEFT JOIN parents pa ON pa.id = t.id
  LEFT JOIN waiting w ON w.id = t.id
  LEFT JOIN progress pr ON pr.task_id = t.id
  WHERE t.deleted_at IS NULL ${list}
  ORDER BY t.priority, t.created_at, t.id`;

const CHANGED_SINCE = `SELECT DISTINCT task_id FROM events WHERE seq > ? AND task_id IS NOT NULL`;

// Both ends of every link of the given tasks, live or removed: a change to one end can change the
// other's derived fields (a parent's open children, a blocked task's blocker finished).
const ADJACENT = perDialect(
  (d) => `SELECT from_task_id, to_task_id FROM relationships WHERE ${d.inList("from_task_id")}
  UNION SELECT from_task_id, to_task_id FROM relationships WHERE ${d.inList("to_task_id")}`,
);

const TASKS_BY_ID = perDialect((d) => TASKS(`AND ${d.inList("t.id")}`));

const EDGES = (list: string) => `SELECT r.from_task_id, r.to_task_id FROM relationships r
  JOIN tasks a ON a.id = r.from_task_id JOIN tasks b ON b.id = r.to_task_id
  WHERE r.type = 'blocks' AND r.removed_at IS NULL AND a.deleted_at IS NULL AND b.deleted_at IS NULL ${list}
  ORDER BY r.from_task_id, r.to_task_id`;

const LISTS = "SELECT DISTINCT list_id FROM tasks WHERE deleted_at IS NULL ORDER BY list_id";

/**
 * Who is working now: sessions with active work on a task whose claim they still hold live at the
 * parameter's time. Work whose claim lapsed (a conversation that ended or died, a lease that ran
 * out) is not "now", whatever the session may do next. Shared with `arbeit status`.
 */
export const WORKING_NOW = `SELECT w.session_id, w.agent, w.task_id, t.title, w.started_at FROM active_work w
  JOIN tasks t ON t.id = w.task_id
  WHERE w.stopped_at IS NULL AND t.deleted_at IS NULL AND t.claim_session = w.session_id AND t.lease_expires_at > ?
  ORDER BY w.started_at, w.session_id`;

const CLAIMS = (live: boolean) => `SELECT t.id AS task_id, t.title, t.owner, t.claim_session AS session,
    t.lease_expires_at AS until FROM tasks t
  WHERE t.deleted_at IS NULL AND t.lease_expires_at IS NOT NULL AND t.lease_expires_at ${live ? ">" : "<="} ?
  ORDER BY t.lease_expires_at, t.id`;

// The newest event of each session heard from since a time (the events' time index finds them).
const RECENT_SESSIONS = `SELECT e.* FROM events e WHERE e.seq IN (
    SELECT MAX(x.seq) FROM events x WHERE x.timestamp > ? AND x.session_id IS NOT NULL GROUP BY x.session_id)
  ORDER BY e.seq DESC`;

const QUESTIONS = `SELECT c.*, t.title AS task_title, t.status AS task_status, t.list_id AS task_list_id,
    t.version AS task_version, e.agent AS asked_agent, e.session_id AS asked_session
  FROM context_entries c JOIN tasks t ON t.id = c.task_id
  LEFT JOIN events e ON e.entity_type = 'context_entry' AND e.entity_id = c.id AND e.event_type = 'context_added'
  WHERE c.type = 'blocker' AND c.superseded_by IS NULL AND t.deleted_at IS NULL
  ORDER BY c.created_at, c.id`;

const text = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));

function toOverviewRow(row: RawRow): OverviewRow {
  return {
    id: String(row.id),
    list_id: String(row.list_id),
    title: String(row.title),
    type: text(row.type) as TaskType | null,
    status: String(row.status) as TaskStatus,
    priority: Number(row.priority),
    owner: text(row.owner),
    parent_id: text(row.parent_id),
    risk: text(row.risk) as RiskLevel | null,
    impact: text(row.impact) as RiskLevel | null,
    version: Number(row.version),
    created_at: String(row.created_at),
    updated_at: String(row.updated_at),
    claim_session: text(row.claim_session),
    lease_expires_at: text(row.lease_expires_at),
    open_children: Number(row.open_children),
    blocked: Number(row.blocked) === 1,
    progress_done: Number(row.progress_done),
    progress_total: Number(row.progress_total),
  };
}

/** The overview reads, as every store transaction offers them. */
export interface OverviewReads {
  overviewTasks(listId?: string): Promise<OverviewRow[]>;
  /** The live tasks among `ids`, whatever their list. */
  overviewTasksById(ids: readonly string[]): Promise<OverviewRow[]>;
  /**
   * The tasks whose card may read differently since event `seq`: those the events name, and the
   * tasks linked to them (either way, by any relationship).
   */
  overviewChangedSince(seq: number): Promise<string[]>;
  overviewEdges(listId?: string): Promise<Array<[string, string]>>;
  listIds(): Promise<string[]>;
  /** Sessions working at `now`: active work on a task they hold live (WORKING_NOW). */
  workingNow(now: string): Promise<WorkingRow[]>;
  /** Claims at `now`: live ones, or those whose lease ran out and that no one has swept yet. */
  claimsAt(now: string, live: boolean): Promise<ClaimRow[]>;
  /** The newest event of every session heard from after `since`, newest first. */
  sessionsHeardSince(since: string): Promise<ArbeitEvent[]>;
  /** Live blocker entries on live tasks, oldest first, with who asked. */
  openQuestions(): Promise<QuestionRow[]>;
}

export function overviewStatements(db: SqlDb): OverviewReads {
  return {
    async overviewTasks(listId?: string): Promise<OverviewRow[]> {
      const { clause, params } = byList(listId, "t.list_id");
      return (await db.all(TASKS(clause), ...params)).map(toOverviewRow);
    },
    async overviewTasksById(ids) {
      if (ids.length === 0) return [];
      return (await db.all(TASKS_BY_ID(db.dialect), db.dialect.listParam(ids))).map(toOverviewRow);
    },
    async overviewChangedSince(seq) {
      const named = (await db.all(CHANGED_SINCE, seq)).map((row) => String(row.task_id));
      if (named.length === 0) return [];
      const ids = new Set(named);
      const list = db.dialect.listParam(named);
      for (const row of await db.all(ADJACENT(db.dialect), list, list)) {
        ids.add(String(row.from_task_id));
        ids.add(String(row.to_task_id));
      }
      return [...ids];
    },
    async overviewEdges(listId?: string): Promise<Array<[string, string]>> {
      const { clause, params } = byList(listId, "a.list_id");
      return (await db.all(EDGES(clause), ...params)).map((row) => [String(row.from_task_id), String(row.to_task_id)]);
    },
    async listIds(): Promise<string[]> {
      return (await db.all(LISTS)).map((row) => String(row.list_id));
    },
    async workingNow(now: string): Promise<WorkingRow[]> {
      return (await db.all(WORKING_NOW, now)).map((row) => ({
        session_id: String(row.session_id),
        agent: text(row.agent),
        task_id: String(row.task_id),
        title: String(row.title),
        started_at: String(row.started_at),
      }));
    },
    async claimsAt(now: string, live: boolean): Promise<ClaimRow[]> {
      return (await db.all(CLAIMS(live), now)).map((row) => ({
        task_id: String(row.task_id),
        title: String(row.title),
        owner: text(row.owner),
        session: text(row.session),
        until: String(row.until),
      }));
    },
    async sessionsHeardSince(since: string): Promise<ArbeitEvent[]> {
      return (await db.all(RECENT_SESSIONS, since)).map(toEvent);
    },
    async openQuestions(): Promise<QuestionRow[]> {
      return (await db.all(QUESTIONS)).map((row) => ({
        entry: toContext(row),
        task: {
          id: String(row.task_id),
          title: String(row.task_title),
          status: String(row.task_status) as TaskStatus,
          list_id: String(row.task_list_id),
          version: Number(row.task_version),
        },
        asked_by: { agent: text(row.asked_agent), session: text(row.asked_session) },
      }));
    },
  };
}
