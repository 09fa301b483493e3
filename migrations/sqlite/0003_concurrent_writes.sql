-- Arbeit schema v3: a session is linked to a task once, and a file touch is recorded once per
-- task, path, operation and session. The store already inserts these only when absent; the
-- unique indexes make that hold even for writers that run side by side (Postgres).
CREATE UNIQUE INDEX ux_session_links_task_session ON session_links (task_id, session_id);
CREATE UNIQUE INDEX ux_file_associations_touch ON file_associations (task_id, file_path, operation, session_id);
