-- Arbeit schema v5 on Postgres: memory that is set again is reinforced; as
-- migrations/sqlite/0005. Entries older than v5 count as set once.
ALTER TABLE memory ADD COLUMN reinforced INTEGER NOT NULL DEFAULT 1 CHECK (reinforced >= 1);
