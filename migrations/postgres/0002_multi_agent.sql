-- Arbeit schema v2 on Postgres: many agents on one store (claims, idempotency, resume state, memory); mirrors
-- migrations/sqlite/0002_multi_agent.sql.

-- Claims: `owner` (v1) holds the claiming agent; the lease says until when.
ALTER TABLE tasks ADD COLUMN lease_expires_at TEXT COLLATE "C";
ALTER TABLE tasks ADD COLUMN claimed_at TEXT COLLATE "C";
CREATE INDEX idx_tasks_owner ON tasks (owner) WHERE deleted_at IS NULL AND owner IS NOT NULL;

-- Idempotency: the first response to (agent, request_id) is kept and replayed byte for byte.
CREATE TABLE idempotency (
  agent      TEXT COLLATE "C" NOT NULL,
  request_id TEXT COLLATE "C" NOT NULL,
  tool       TEXT COLLATE "C" NOT NULL,
  args_hash  TEXT COLLATE "C" NOT NULL,
  response   TEXT COLLATE "C" NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (agent, request_id)
);

-- Per-agent resume state: the event cursor and the current focus.
CREATE TABLE agent_state (
  agent         TEXT COLLATE "C" PRIMARY KEY,
  cursor_seq    BIGINT NOT NULL DEFAULT 0,
  focus_task_id TEXT COLLATE "C" REFERENCES tasks (id),
  updated_at    TEXT COLLATE "C" NOT NULL
);

-- Scoped key/value memory with optional expiry. scope_id is '' for the project scope.
CREATE TABLE memory (
  id         TEXT COLLATE "C" PRIMARY KEY,
  scope      TEXT COLLATE "C" NOT NULL CHECK (scope IN ('project', 'list', 'task', 'agent')),
  scope_id   TEXT COLLATE "C" NOT NULL DEFAULT '',
  key        TEXT COLLATE "C" NOT NULL,
  value      TEXT COLLATE "C" NOT NULL,
  expires_at TEXT COLLATE "C",
  created_at TEXT COLLATE "C" NOT NULL,
  updated_at TEXT COLLATE "C" NOT NULL,
  UNIQUE (scope, scope_id, key)
);
CREATE INDEX idx_memory_expiry ON memory (expires_at) WHERE expires_at IS NOT NULL;

-- Graph analysis reads every live blocks edge.
CREATE INDEX idx_relationships_type ON relationships (type, from_task_id, to_task_id) WHERE removed_at IS NULL;

-- A session's work history, newest first: what a new conversation in that session resumes.
CREATE INDEX idx_active_work_history ON active_work (session_id, started_at);
