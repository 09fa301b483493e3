-- Arbeit schema v11 on Postgres: the events of a session by its id; as migrations/sqlite/0011.
CREATE INDEX idx_events_session ON events (session_id, agent) WHERE session_id IS NOT NULL;
