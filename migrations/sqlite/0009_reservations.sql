-- Arbeit schema v9: file reservations, and each claim's own lease length.
-- A claim keeps the lease length it was taken with (claim_lease_seconds), so the holder's activity
-- renews it by that length, not by the default; NULL (claims older than v8) is the default, 900 s.
ALTER TABLE tasks ADD COLUMN claim_lease_seconds INTEGER CHECK (claim_lease_seconds >= 1);

-- A session holds a path or glob of the project (relative to its root) for a while, exclusively
-- (only it edits) or shared (others are warned). Leases run on the database's clock like claims;
-- a row lives while its lease does and is deleted when released or swept, the event log keeping
-- its history. `prefix` is the pattern's literal leading folders (the whole path when it has no
-- wildcard): a check looks up the prefixes a path can match, never scans every reservation.
CREATE TABLE reservations (
  id            TEXT PRIMARY KEY,
  pattern       TEXT NOT NULL,
  prefix        TEXT NOT NULL,
  exclusive     INTEGER NOT NULL CHECK (exclusive IN (0, 1)),
  session_id    TEXT NOT NULL,
  agent         TEXT,
  task_id       TEXT REFERENCES tasks (id),
  lease_seconds INTEGER NOT NULL CHECK (lease_seconds >= 1),
  expires_at    TEXT NOT NULL,
  created_at    TEXT NOT NULL
);
CREATE UNIQUE INDEX idx_reservations_holder ON reservations (session_id, pattern);
CREATE INDEX idx_reservations_prefix ON reservations (prefix, expires_at);
CREATE INDEX idx_reservations_expiry ON reservations (expires_at);
CREATE INDEX idx_reservations_task ON reservations (task_id) WHERE task_id IS NOT NULL;
