-- Arbeit schema v1: tasks, relationships, context, progress, sessions, active work, files and events.
-- Nothing is hard-deleted by normal operations: tasks carry deleted_at, relationships removed_at,
-- active work stopped_at. Uniqueness that only holds for live rows uses partial indexes.

CREATE TABLE tasks (
  id          TEXT PRIMARY KEY,
  list_id     TEXT NOT NULL DEFAULT 'default',
  title       TEXT NOT NULL,
  type        TEXT CHECK (type IN ('epic', 'feature', 'bug', 'investigation', 'chore')),
  status      TEXT NOT NULL DEFAULT 'open'
              CHECK (status IN ('open', 'in_progress', 'completed', 'cancelled')),
  intent      TEXT,
  description TEXT,
  plan        TEXT,
  priority    INTEGER NOT NULL DEFAULT 2 CHECK (priority BETWEEN 0 AND 4),
  owner       TEXT,
  active_form TEXT,
  version     INTEGER NOT NULL DEFAULT 1,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  deleted_at  TEXT
);
CREATE INDEX idx_tasks_list_status ON tasks (list_id, status) WHERE deleted_at IS NULL;
CREATE INDEX idx_tasks_open_order ON tasks (priority, created_at, id)
  WHERE deleted_at IS NULL AND status = 'open';
CREATE INDEX idx_tasks_updated ON tasks (updated_at) WHERE deleted_at IS NULL;

CREATE TABLE relationships (
  id           TEXT PRIMARY KEY,
  from_task_id TEXT NOT NULL REFERENCES tasks (id),
  to_task_id   TEXT NOT NULL REFERENCES tasks (id),
  type         TEXT NOT NULL
               CHECK (type IN ('parent_of', 'blocks', 'relates_to', 'duplicates', 'splits_from')),
  metadata     TEXT,
  created_at   TEXT NOT NULL,
  removed_at   TEXT
);
CREATE UNIQUE INDEX ux_relationships_live ON relationships (from_task_id, type, to_task_id)
  WHERE removed_at IS NULL;
CREATE INDEX idx_relationships_to ON relationships (to_task_id, type, from_task_id)
  WHERE removed_at IS NULL;
-- One parent per task.
CREATE UNIQUE INDEX ux_relationships_one_parent ON relationships (to_task_id)
  WHERE type = 'parent_of' AND removed_at IS NULL;

CREATE TABLE context_entries (
  id            TEXT PRIMARY KEY,
  task_id       TEXT NOT NULL REFERENCES tasks (id),
  type          TEXT NOT NULL CHECK (type IN ('decision', 'rationale', 'attempt', 'outcome',
                                              'blocker', 'note', 'reference', 'user_input')),
  content       TEXT NOT NULL,
  metadata      TEXT,
  superseded_by TEXT REFERENCES context_entries (id),
  created_at    TEXT NOT NULL
);
CREATE INDEX idx_context_task ON context_entries (task_id);

CREATE TABLE progress_items (
  id           TEXT PRIMARY KEY,
  task_id      TEXT NOT NULL REFERENCES tasks (id),
  content      TEXT NOT NULL,
  completed    INTEGER NOT NULL DEFAULT 0 CHECK (completed IN (0, 1)),
  created_at   TEXT NOT NULL,
  completed_at TEXT
);
CREATE INDEX idx_progress_task ON progress_items (task_id);

CREATE TABLE session_links (
  id         TEXT PRIMARY KEY,
  task_id    TEXT NOT NULL REFERENCES tasks (id),
  session_id TEXT NOT NULL,
  agent      TEXT,
  created_at TEXT NOT NULL,
  UNIQUE (task_id, session_id)
);
CREATE INDEX idx_session_links_session ON session_links (session_id);

CREATE TABLE active_work (
  session_id TEXT NOT NULL,
  task_id    TEXT NOT NULL REFERENCES tasks (id),
  agent      TEXT,
  started_at TEXT NOT NULL,
  stopped_at TEXT
);
CREATE UNIQUE INDEX ux_active_work_session ON active_work (session_id) WHERE stopped_at IS NULL;
CREATE INDEX idx_active_work_task ON active_work (task_id) WHERE stopped_at IS NULL;

CREATE TABLE file_associations (
  id         TEXT PRIMARY KEY,
  task_id    TEXT NOT NULL REFERENCES tasks (id),
  file_path  TEXT NOT NULL,
  operation  TEXT NOT NULL CHECK (operation IN ('read', 'write')),
  session_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (task_id, file_path, operation, session_id)
);
CREATE INDEX idx_file_associations_path ON file_associations (file_path);

-- Append-only. seq orders events and serves as the cursor agents resume from.
CREATE TABLE events (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  id          TEXT NOT NULL UNIQUE,
  timestamp   TEXT NOT NULL,
  event_type  TEXT NOT NULL,
  entity_type TEXT NOT NULL,
  entity_id   TEXT NOT NULL,
  task_id     TEXT,
  payload     TEXT NOT NULL,
  session_id  TEXT,
  agent       TEXT
);
CREATE INDEX idx_events_task ON events (task_id, seq);
CREATE INDEX idx_events_entity ON events (entity_type, entity_id);
CREATE INDEX idx_events_type ON events (event_type);
CREATE INDEX idx_events_timestamp ON events (timestamp);
