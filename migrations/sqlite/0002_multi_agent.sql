-- Arbeit schema v2: many agents on one store (DESIGN §5).

-- Claims: `owner` (v1) holds the claiming agent; the lease says until when.
ALTER TABLE tasks ADD COLUMN lease_expires_at TEXT;
ALTER TABLE tasks ADD COLUMN claimed_at TEXT;
CREATE INDEX idx_tasks_owner ON tasks (owner) WHERE deleted_at IS NULL AND owner IS NOT NULL;

-- Idempotency: the first response to (agent, request_id) is kept and replayed byte for byte.
CREATE TABLE idempotency (
  agent      TEXT NOT NULL,
  request_id TEXT NOT NULL,
  tool       TEXT NOT NULL,
  args_hash  TEXT NOT NULL,
  response   TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (agent, request_id)
);

-- Per-agent resume state: the event cursor and the current focus.
CREATE TABLE agent_state (
  agent         TEXT PRIMARY KEY,
  cursor_seq    INTEGER NOT NULL DEFAULT 0,
  focus_task_id TEXT REFERENCES tasks (id),
  updated_at    TEXT NOT NULL
);

-- Scoped key/value memory with optional expiry. scope_id is '' for the project scope.
CREATE TABLE memory (
  id         TEXT PRIMARY KEY,
  scope      TEXT NOT NULL CHECK (scope IN ('project', 'list', 'task', 'agent')),
  scope_id   TEXT NOT NULL DEFAULT '',
  key        TEXT NOT NULL,
  value      TEXT NOT NULL,
  expires_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (scope, scope_id, key)
);
CREATE INDEX idx_memory_expiry ON memory (expires_at) WHERE expires_at IS NOT NULL;

-- Graph analysis reads every live blocks edge; this makes that a covering index scan.
CREATE INDEX idx_relationships_type ON relationships (type, from_task_id, to_task_id) WHERE removed_at IS NULL;

-- A session's work history, newest first: what a new conversation in that session resumes.
CREATE INDEX idx_active_work_history ON active_work (session_id, started_at);

-- The cycle checks walk blocks and parent_of edges step by step, skipping deleted tasks. This
-- index holds only deleted tasks, so "is this one deleted?" costs a lookup in a tiny tree instead
-- of a row read per step (a third of the time of a check on a 5,000-long chain: docs/benchmarks.md).
CREATE INDEX idx_tasks_deleted ON tasks (id) WHERE deleted_at IS NOT NULL;
