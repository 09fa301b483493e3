import type { ArbeitEvent, TaskStatus } from "../../domain/types.js";
import { toEvent } from "../rows.js";
import type { SqlDb, SqlValue } from "./database.js";
import { UNFINISHED } from "./task-columns.js";

/**
 * Reads behind the dashboard's home view (what needs a person, how the work goes) and its
 * activity search over the whole event log. Each is one statement, the same on both engines.
 */

export interface StoppedRow {
  session_id: string;
  agent: string | null;
  task_id: string;
  title: string;
  status: TaskStatus;
  stopped_at: string;
}

export interface AttemptsRow {
  task_id: string;
  title: string;
  attempts: number;
  last_at: string;
}

export interface EpicRow {
  id: string;
  title: string;
  status: TaskStatus;
  /** Its children finished (completed or cancelled), of all its live children. */
  done: number;
  total: number;
}

export interface DayRow {
  /** YYYY-MM-DD, UTC. */
  day: string;
  completed: number;
  decisions: number;
  blockers: number;
}

/** The schema version that brought the webhooks table (migration 0008). */
export const WEBHOOKS_SCHEMA = 8;

export interface FailingWebhookRow {
  id: string;
  url: string;
  last_failure: string;
  last_failure_at: string;
}

/** What the activity search narrows the event log to; every field is optional. */
export interface EventSearch {
  /** Events before this seq (a cursor from the previous page); from the newest when absent. */
  before?: number | undefined;
  task_id?: string | undefined;
  agent?: string | undefined;
  session_id?: string | undefined;
  event_types?: readonly string[] | undefined;
  /** ISO 8601 bounds on the event's timestamp: from inclusive, to exclusive. */
  from?: string | undefined;
  to?: string | undefined;
  /** Case-insensitive text in the event's type, agent, task id, payload, or its task's title. */
  text?: string | undefined;
  limit: number;
}

export interface MissionReads {
  /**
   * Sessions whose work on a task stopped after `since` while the task is still unfinished and
   * nobody works on it now, newest first.
   */
  stoppedUnfinished(since: string, limit: number): Promise<StoppedRow[]>;
  /** Unfinished tasks holding at least `min` live attempt entries, most first. */
  attemptsPilingUp(min: number, limit: number): Promise<AttemptsRow[]>;
  /** Every live epic that is not cancelled, with its direct children's completion. */
  epicProgress(): Promise<EpicRow[]>;
  /** Per UTC day from `since`: tasks completed, decisions and blockers recorded (days with none left out). */
  dailyWork(since: string): Promise<DayRow[]>;
  /** Live webhooks (`arbeit notify`) whose latest delivery failed: no success since the last failure. */
  failingWebhooks(): Promise<FailingWebhookRow[]>;
  /** Events matching `search`, newest first, each with its task's title when it has one. */
  searchEvents(search: EventSearch): Promise<Array<ArbeitEvent & { task_title: string | null }>>;
}

const STOPPED = `SELECT w.session_id, w.agent, w.task_id, t.title, t.status, MAX(w.stopped_at) AS stopped_at
  FROM active_work w JOIN tasks t ON t.id = w.task_id
  WHERE w.stopped_at IS NOT NULL AND w.stopped_at > ? AND t.deleted_at IS NULL AND t.status IN ${UNFINISHED}
    AND NOT EXISTS (SELECT 1 FROM active_work x WHERE x.task_id = w.task_id AND x.stopped_at IS NULL)
  GROUP BY w.session_id, w.agent, w.task_id, t.title, t.status
  ORDER BY MAX(w.stopped_at) DESC, w.task_id LIMIT ?`;

const ATTEMPTS = `SELECT c.task_id, t.title, COUNT(*) AS attempts, MAX(c.created_at) AS last_at
  FROM context_entries c JOIN tasks t ON t.id = c.task_id
  WHERE c.type = 'attempt' AND c.superseded_by IS NULL AND t.deleted_at IS NULL AND t.status IN ${UNFINISHED}
  GROUP BY c.task_id, t.title HAVING COUNT(*) >= ?
  ORDER BY COUNT(*) DESC, MAX(c.created_at) DESC LIMIT ?`;

const EPICS = `SELECT e.id, e.title, e.status, e.priority, e.created_at, COUNT(c.id) AS total,
    SUM(CASE WHEN c.status IN ('completed', 'cancelled') THEN 1 ELSE 0 END) AS done
  FROM tasks e
  LEFT JOIN relationships r ON r.from_task_id = e.id AND r.type = 'parent_of' AND r.removed_at IS NULL
  LEFT JOIN tasks c ON c.id = r.to_task_id AND c.deleted_at IS NULL
  WHERE e.type = 'epic' AND e.deleted_at IS NULL AND e.status <> 'cancelled'
  GROUP BY e.id, e.title, e.status, e.priority, e.created_at
  ORDER BY e.priority, e.created_at, e.id`;

// A completion is the task_updated event whose status change ends at completed; a decision or a
// blocker is a context_added event of that type (its payload starts with the entry's type).
const DAILY = `SELECT substr(timestamp, 1, 10) AS day,
    SUM(CASE WHEN event_type = 'task_updated' AND payload LIKE '%"status":{"from":"%","to":"completed"}%'
      THEN 1 ELSE 0 END) AS completed,
    SUM(CASE WHEN event_type = 'context_added' AND payload LIKE '{"type":"decision",%' THEN 1 ELSE 0 END) AS decisions,
    SUM(CASE WHEN event_type = 'context_added' AND payload LIKE '{"type":"blocker",%' THEN 1 ELSE 0 END) AS blockers
  FROM events
  WHERE timestamp >= ? AND event_type IN ('task_updated', 'context_added')
  GROUP BY substr(timestamp, 1, 10)
  ORDER BY day`;

const FAILING_WEBHOOKS = `SELECT id, url, last_failure, last_failure_at FROM webhooks
  WHERE removed_at IS NULL AND last_failure_at IS NOT NULL
    AND (last_success_at IS NULL OR last_success_at < last_failure_at)
  ORDER BY last_failure_at DESC, id`;

/** `text` as a LIKE pattern that matches it anywhere, its own % _ and \ taken literally. */
const containing = (text: string): string => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

const TEXT_MATCH = ["e.event_type", "e.payload", "e.task_id", "e.agent", "t.title"]
  .map((column) => `LOWER(COALESCE(${column}, '')) LIKE ? ESCAPE '\\'`)
  .join(" OR ");

export function missionStatements(db: SqlDb): MissionReads {
  const d = db.dialect;
  return {
    async stoppedUnfinished(since, limit) {
      return (await db.all(STOPPED, since, limit)).map((row) => ({
        session_id: String(row.session_id),
        agent: row.agent === null || row.agent === undefined ? null : String(row.agent),
        task_id: String(row.task_id),
        title: String(row.title),
        status: String(row.status) as TaskStatus,
        stopped_at: String(row.stopped_at),
      }));
    },
    async attemptsPilingUp(min, limit) {
      return (await db.all(ATTEMPTS, min, limit)).map((row) => ({
        task_id: String(row.task_id),
        title: String(row.title),
        attempts: Number(row.attempts),
        last_at: String(row.last_at),
      }));
    },
    async epicProgress() {
      return (await db.all(EPICS)).map((row) => ({
        id: String(row.id),
        title: String(row.title),
        status: String(row.status) as TaskStatus,
        done: Number(row.done ?? 0),
        total: Number(row.total),
      }));
    },
    async dailyWork(since) {
      return (await db.all(DAILY, since)).map((row) => ({
        day: String(row.day),
        completed: Number(row.completed),
        decisions: Number(row.decisions),
        blockers: Number(row.blockers),
      }));
    },
    async failingWebhooks() {
      return (await db.all(FAILING_WEBHOOKS)).map((row) => ({
        id: String(row.id),
        url: String(row.url),
        last_failure: String(row.last_failure),
        last_failure_at: String(row.last_failure_at),
      }));
    },
    async searchEvents(search) {
      const where = ["e.seq < ?"];
      const params: SqlValue[] = [search.before ?? Number.MAX_SAFE_INTEGER];
      const equal = (column: string, value: string | undefined) => {
        if (value === undefined) return;
        where.push(`${column} = ?`);
        params.push(value);
      };
      equal("e.task_id", search.task_id);
      equal("e.agent", search.agent);
      equal("e.session_id", search.session_id);
      if (search.event_types && search.event_types.length > 0) {
        where.push(d.inList("e.event_type"));
        params.push(d.listParam(search.event_types));
      }
      if (search.from !== undefined) {
        where.push("e.timestamp >= ?");
        params.push(search.from);
      }
      if (search.to !== undefined) {
        where.push("e.timestamp < ?");
        params.push(search.to);
      }
      if (search.text !== undefined && search.text !== "") {
        where.push(`(${TEXT_MATCH})`);
        const pattern = containing(search.text);
        params.push(pattern, pattern, pattern, pattern, pattern);
      }
      const rows = await db.all(
        `SELECT e.*, t.title AS task_title FROM events e LEFT JOIN tasks t ON t.id = e.task_id
          WHERE ${where.join(" AND ")} ORDER BY e.seq DESC LIMIT ?`,
        ...params,
        search.limit,
      );
      return rows.map((row) => ({
        ...toEvent(row),
        task_title: row.task_title === null || row.task_title === undefined ? null : String(row.task_title),
      }));
    },
  };
}
