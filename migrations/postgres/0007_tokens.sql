-- Arbeit schema v7 on Postgres: tokens for `arbeit serve`; as migrations/sqlite/0007.
-- Only the SHA-256 of a token's secret is kept. Text in C collation, as every column here.
CREATE TABLE tokens (
  id           TEXT COLLATE "C" PRIMARY KEY,
  name         TEXT COLLATE "C" NOT NULL,
  kind         TEXT COLLATE "C" NOT NULL CHECK (kind IN ('agent', 'person')),
  read_only    INTEGER NOT NULL DEFAULT 0 CHECK (read_only IN (0, 1)),
  hash         TEXT COLLATE "C" NOT NULL UNIQUE,
  created_at   TEXT COLLATE "C" NOT NULL,
  expires_at   TEXT COLLATE "C",
  revoked_at   TEXT COLLATE "C",
  last_used_at TEXT COLLATE "C"
);
CREATE INDEX idx_tokens_name ON tokens (name);
