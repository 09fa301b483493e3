import type { SessionState } from "../task-store.js";
import type { SqlDb } from "./database.js";
import { perDialect } from "./dialect.js";

const GET = "SELECT session_id, agent, cursor_seq, focus_task_id, updated_at FROM session_state WHERE session_id = ?";
// A session seen for the first time starts its cursor at the present: what happened before it
// existed is history for its briefing, not news.
const SET_FOCUS = `INSERT INTO session_state (session_id, agent, cursor_seq, focus_task_id, updated_at)
  VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) FROM events), ?, ?)
  ON CONFLICT (session_id) DO UPDATE SET focus_task_id = excluded.focus_task_id, agent = excluded.agent,
    updated_at = excluded.updated_at`;

const texts = perDialect((d) => ({
  // The cursor only moves forward, even when two calls race.
  save: `INSERT INTO session_state (session_id, agent, cursor_seq, focus_task_id, updated_at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (session_id) DO UPDATE SET
      cursor_seq = ${d.greatest("session_state.cursor_seq", "excluded.cursor_seq")},
      agent = excluded.agent, focus_task_id = excluded.focus_task_id, updated_at = excluded.updated_at`,
}));

/** Resume state: each session's event cursor and focus. */
export function sessionStateStatements(db: SqlDb) {
  const sql = texts(db.dialect);
  return {
    async sessionState(session: string): Promise<SessionState | undefined> {
      const row = await db.get(GET, session);
      return row ? { ...(row as unknown as SessionState), cursor_seq: Number(row.cursor_seq) } : undefined;
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
