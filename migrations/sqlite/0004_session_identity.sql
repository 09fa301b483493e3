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
-- A parent's work is its children: it is not ready while one is open or in progress. Each task
-- carries how many of its live children are unfinished, kept true by the triggers below in the
-- same transaction as any change (as relationships.open_edge is), so ready work is still one
-- index scan. An index of the graph, not state anyone sets: no code writes it.
ALTER TABLE tasks ADD COLUMN open_children INTEGER NOT NULL DEFAULT 0;
UPDATE tasks SET open_children = (
  SELECT COUNT(*) FROM relationships r JOIN tasks c ON c.id = r.to_task_id
  WHERE r.from_task_id = tasks.id AND r.type = 'parent_of' AND r.removed_at IS NULL
    AND c.deleted_at IS NULL AND c.status IN ('open', 'in_progress'));

CREATE TRIGGER trg_child_added AFTER INSERT ON relationships
WHEN NEW.type = 'parent_of' AND NEW.removed_at IS NULL
BEGIN
  UPDATE tasks SET open_children = open_children + 1
  WHERE id = NEW.from_task_id AND EXISTS (SELECT 1 FROM tasks c WHERE c.id = NEW.to_task_id
    AND c.deleted_at IS NULL AND c.status IN ('open', 'in_progress'));
END;

CREATE TRIGGER trg_child_removed AFTER UPDATE OF removed_at ON relationships
WHEN NEW.type = 'parent_of' AND OLD.removed_at IS NULL AND NEW.removed_at IS NOT NULL
BEGIN
  UPDATE tasks SET open_children = open_children - 1
  WHERE id = NEW.from_task_id AND EXISTS (SELECT 1 FROM tasks c WHERE c.id = NEW.to_task_id
    AND c.deleted_at IS NULL AND c.status IN ('open', 'in_progress'));
END;

CREATE TRIGGER trg_child_finished_or_reopened AFTER UPDATE OF status, deleted_at ON tasks
WHEN (OLD.deleted_at IS NULL AND OLD.status IN ('open', 'in_progress'))
  IS NOT (NEW.deleted_at IS NULL AND NEW.status IN ('open', 'in_progress'))
BEGIN
  UPDATE tasks SET open_children = open_children
    + (CASE WHEN NEW.deleted_at IS NULL AND NEW.status IN ('open', 'in_progress') THEN 1 ELSE -1 END)
  WHERE id IN (SELECT from_task_id FROM relationships
               WHERE to_task_id = NEW.id AND type = 'parent_of' AND removed_at IS NULL);
END;

-- Ready work, for a caller: open, unleased tasks without unfinished children, in priority order.
-- The owner is in the index, so leaving out tasks assigned to other agents reads no rows. (The
-- graph analysis keeps reading every open, unleased task in order from idx_tasks_ready_free.)
CREATE INDEX idx_tasks_ready_leaves ON tasks (priority, created_at, id, owner)
  WHERE deleted_at IS NULL AND status = 'open' AND lease_expires_at IS NULL AND open_children = 0;

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
