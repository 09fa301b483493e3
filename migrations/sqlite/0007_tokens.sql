-- Arbeit schema v7: tokens for `arbeit serve`. A token is who a remote caller is: an agent's name
-- or a person's. Only the SHA-256 of its secret is kept, so a copy of the database lets no one in.
-- Revoked tokens stay (revoked_at set): the event log names them.
CREATE TABLE tokens (
  id           TEXT PRIMARY KEY,
  name         TEXT NOT NULL,
  kind         TEXT NOT NULL CHECK (kind IN ('agent', 'person')),
  read_only    INTEGER NOT NULL DEFAULT 0 CHECK (read_only IN (0, 1)),
  hash         TEXT NOT NULL UNIQUE,
  created_at   TEXT NOT NULL,
  expires_at   TEXT,
  revoked_at   TEXT,
  last_used_at TEXT
);
CREATE INDEX idx_tokens_name ON tokens (name);
