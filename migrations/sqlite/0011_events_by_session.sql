-- Arbeit schema v11: the events of a session by its id. `arbeit serve` asks, for a session a caller
-- names, which agents have written in it (a session belongs to the agent whose token first used
-- it); without this index that question reads the whole event log.
CREATE INDEX idx_events_session ON events (session_id, agent) WHERE session_id IS NOT NULL;
