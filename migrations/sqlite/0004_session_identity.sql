-- Arbeit schema v4: identity is (agent, session). A claim, a focus, an event cursor and an
-- idempotency record belong to the session that made them; the agent is a name for people and
-- filters. Rows written before v4 knew only the agent: they move to the session `agent:<name>`,
-- which is the session a caller without one acts as.

-- The session holding a task's lease. `owner` still names the holder's agent; an owner without a
-- live lease is an assignment.
ALTER TABLE tasks ADD COLUMN claim_session TEXT;
UPDATE tasks SET claim_session = 'agent:' || owner WHERE owner IS NOT NULL AND lease_expires_at IS NOT NULL;
-- A lease without an owner (left by `owner: null` before v4) holds nothing.
UPDATE tasks SET lease_expires_at = NULL WHERE owner IS NULL AND lease_expires_at IS NOT NULL;
CREATE INDEX idx_tasks_claim_session ON tasks (claim_session) WHERE deleted_at IS NULL AND claim_session IS NOT NULL;
-- Ready work for a caller leaves out tasks assigned to other agents: the owner is in the ready
-- index, so the scan in priority order checks it without reading each task's row.
DROP INDEX idx_tasks_ready_free;
CREATE INDEX idx_tasks_ready_free ON tasks (priority, created_at, id, owner)
  WHERE deleted_at IS NULL AND status = 'open' AND lease_expires_at IS NULL;

-- Idempotency per session and list: two sessions reusing a request id never see each other's
-- results. list_id is '' when the caller names no list.
CREATE TABLE idempotency_v4 (
  session_id TEXT NOT NULL,
  list_id    TEXT NOT NULL DEFAULT '',
  request_id TEXT NOT NULL,
  tool       TEXT NOT NULL,
  args_hash  TEXT NOT NULL,
  response   TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (session_id, list_id, request_id)
);
INSERT INTO idempotency_v4 (session_id, list_id, request_id, tool, args_hash, response, created_at)
  SELECT 'agent:' || agent, '', request_id, tool, args_hash, response, created_at FROM idempotency ORDER BY rowid;
DROP TABLE idempotency;
ALTER TABLE idempotency_v4 RENAME TO idempotency;

-- Resume state per session: its event cursor and its focus.
CREATE TABLE session_state (
  session_id    TEXT PRIMARY KEY,
  agent         TEXT,
  cursor_seq    INTEGER NOT NULL DEFAULT 0,
  focus_task_id TEXT REFERENCES tasks (id),
  updated_at    TEXT NOT NULL
);
INSERT INTO session_state (session_id, agent, cursor_seq, focus_task_id, updated_at)
  SELECT 'agent:' || agent, agent, cursor_seq, focus_task_id, updated_at FROM agent_state ORDER BY rowid;
DROP TABLE agent_state;
