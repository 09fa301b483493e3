import type { AgentState } from "../task-store.js";
import type { SqlDb } from "./database.js";
import { perDialect } from "./dialect.js";

const GET = "SELECT agent, cursor_seq, focus_task_id, updated_at FROM agent_state WHERE agent = ?";

const texts = perDialect((d) => ({
  // The cursor only moves forward, even when two calls race.
  save: `INSERT INTO agent_state (agent, cursor_seq, focus_task_id, updated_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (agent) DO UPDATE SET cursor_seq = ${d.greatest("agent_state.cursor_seq", "excluded.cursor_seq")},
      focus_task_id = excluded.focus_task_id, updated_at = excluded.updated_at`,
}));

/** Resume state: each caller's event cursor and focus. */
export function agentStateStatements(db: SqlDb) {
  const sql = texts(db.dialect);
  return {
    async agentState(agent: string): Promise<AgentState | undefined> {
      const row = await db.get(GET, agent);
      return row ? { ...(row as unknown as AgentState), cursor_seq: Number(row.cursor_seq) } : undefined;
    },

    /** Saves the focus and moves the cursor forward (never back). */
    async saveAgentState(
      agent: string,
      state: { cursor_seq: number; focus_task_id: string | null },
      at: string,
    ): Promise<void> {
      await db.run(sql.save, agent, state.cursor_seq, state.focus_task_id, at);
    },
  };
}
