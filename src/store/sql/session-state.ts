import type { ArbeitEvent, Task } from "../../domain/types.js";
import { toEvent, toTask } from "../rows.js";
import type { SessionState } from "../task-store.js";
import type { SqlDb } from "./database.js";
import { type Dialect, perDialect } from "./dialect.js";
import { TASK_ORDER, taskColumns } from "./task-columns.js";

const GET = "SELECT session_id, agent, cursor_seq, focus_task_id, updated_at FROM session_state WHERE session_id = ?";
// A session seen for the first time starts its cursor at the present: what happened before it
// existed is history for its briefing, not news.
const SET_FOCUS = `INSERT INTO session_state (session_id, agent, cursor_seq, focus_task_id, updated_at)
  VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) FROM events), ?, ?)
  ON CONFLICT (session_id) DO UPDATE SET focus_task_id = excluded.focus_task_id, agent = excluded.agent,
    updated_at = excluded.updated_at`;

/**
 * The task a session's news is about and where its news starts, as one row `news (id, since)`:
 * the task of its live active work, else the live task it last started work on, else its focus;
 * after the later of a host's place (the first parameter after the sessions) and its cursor, -1
 * when neither is known. Parameters: the session three times, the host's place, the session.
 */
const newsOf = (d: Dialect) => `WITH news AS (SELECT COALESCE(
    (SELECT w.task_id FROM active_work w JOIN tasks wt ON wt.id = w.task_id
      WHERE w.session_id = ? AND w.stopped_at IS NULL AND wt.deleted_at IS NULL),
    (SELECT w.task_id FROM active_work w JOIN tasks wt ON wt.id = w.task_id
      WHERE w.session_id = ? AND wt.deleted_at IS NULL ORDER BY w.started_at DESC, w.rowid DESC LIMIT 1),
    (SELECT s.focus_task_id FROM session_state s WHERE s.session_id = ?)) AS id,
  ${d.greatest("?", "COALESCE((SELECT s.cursor_seq FROM session_state s WHERE s.session_id = ?), -1)")} AS since)`;

/** The live tasks that block the news task. */
const NEWS_BLOCKERS = `FROM news JOIN relationships e ON e.to_task_id = news.id JOIN tasks t ON t.id = e.from_task_id
  WHERE e.type = 'blocks' AND e.removed_at IS NULL AND t.deleted_at IS NULL`;

/** The news task's events and its blockers' after where the news starts. */
const NEWS_EVENTS = `FROM events WHERE task_id IN (SELECT id FROM news UNION ALL SELECT t.id ${NEWS_BLOCKERS})
  AND seq > (SELECT since FROM news)`;

const texts = perDialect((d) => ({
  newsTask: `${newsOf(d)} SELECT news.id AS news_task_id, news.since AS news_since, ${taskColumns(d)}
    FROM news LEFT JOIN tasks t ON t.id = news.id AND t.deleted_at IS NULL`,
  newsBlockers: `${newsOf(d)} SELECT ${taskColumns(d)} ${NEWS_BLOCKERS} ORDER BY ${TASK_ORDER}`,
  newsCount: `${newsOf(d)} SELECT COUNT(*) AS n ${NEWS_EVENTS}`,
  newsEvents: `${newsOf(d)} SELECT * ${NEWS_EVENTS} ORDER BY seq DESC LIMIT ?`,
  // The cursor only moves forward, even when two calls race.
  save: `INSERT INTO session_state (session_id, agent, cursor_seq, focus_task_id, updated_at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (session_id) DO UPDATE SET
      cursor_seq = ${d.greatest("session_state.cursor_seq", "excluded.cursor_seq")},
      agent = excluded.agent, focus_task_id = excluded.focus_task_id, updated_at = excluded.updated_at`,
}));

/** What `newsReads` answers: the reads of a session's news, keyed by the task and start they chose. */
export interface NewsReads {
  /** The task the news is about (null when the session has none), and where it starts (-1: nowhere). */
  task_id: string | null;
  since: number;
  /** The task, unless deleted. */
  task: Task | undefined;
  /** Its live blockers, in task order. */
  blockers: Task[];
  /** The newest `limit` events after `since` on the task or a blocker, oldest first, and how many there were. */
  total: number;
  events: ArbeitEvent[];
}

/** Resume state: each session's event cursor and focus. */
export function sessionStateStatements(db: SqlDb) {
  const sql = texts(db.dialect);
  return {
    async sessionState(session: string): Promise<SessionState | undefined> {
      const row = await db.get(GET, session);
      return row ? { ...(row as unknown as SessionState), cursor_seq: Number(row.cursor_seq) } : undefined;
    },

    /**
     * A session's news reads without waiting for the session's own: each statement finds the
     * task and the start itself (all go out together, one round trip on Postgres). Each runs on
     * its own snapshot in a write transaction: the caller checks the answer names the task and
     * start it expects.
     */
    async newsReads(session: string, after: number, limit: number): Promise<NewsReads> {
      const keys = [session, session, session, after, session];
      const started = <T>(read: Promise<T>) => {
        read.catch(() => {});
        return read;
      };
      const taskRead = started(db.get(sql.newsTask, ...keys));
      const blockersRead = started(db.all(sql.newsBlockers, ...keys));
      const countRead = started(db.get(sql.newsCount, ...keys));
      const eventsRead = started(db.all(sql.newsEvents, ...keys, limit));
      const row = await taskRead;
      const blockers = (await blockersRead).map(toTask);
      const total = Number((await countRead)?.n ?? 0);
      const events = (await eventsRead).map(toEvent).reverse();
      return {
        task_id: (row?.news_task_id as string | null | undefined) ?? null,
        since: Number(row?.news_since ?? -1),
        task: row?.id == null ? undefined : toTask(row),
        blockers,
        total,
        events,
      };
    },

    /** Saves the focus and moves the cursor forward (never back). */
    async saveSessionState(
      session: string,
      state: { agent: string | null; cursor_seq: number; focus_task_id: string | null },
      at: string,
    ): Promise<void> {
      db.later(sql.save, session, state.agent, state.cursor_seq, state.focus_task_id, at);
    },

    /** Moves the session's focus (start_work does), leaving its cursor where it is (a new one: now). */
    async setFocus(session: string, agent: string | null, taskId: string, at: string): Promise<void> {
      db.later(SET_FOCUS, session, agent, taskId, at);
    },
  };
}
