-- Arbeit schema v8: outgoing webhooks (`arbeit notify`). Each one is a URL told of chosen kinds of
-- events, signed with its own secret (HMAC-SHA256), which the sender needs and so keeps as is.
-- delivered_seq is its cursor in the event log: events up to it are handled (sent, or given up
-- on after the retries, which last_failure then records). Removed webhooks stay (removed_at set).
CREATE TABLE webhooks (
  id              TEXT PRIMARY KEY,
  url             TEXT NOT NULL,
  events          TEXT NOT NULL,
  secret          TEXT NOT NULL,
  created_at      TEXT NOT NULL,
  removed_at      TEXT,
  delivered_seq   INTEGER NOT NULL DEFAULT 0,
  last_success_at TEXT,
  last_failure_at TEXT,
  last_failure    TEXT
);
