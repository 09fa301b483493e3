-- Arbeit schema v6 on Postgres: optional risk and impact on tasks; as migrations/sqlite/0006.
-- Tasks older than v6 are not assessed (NULL). Text in C collation, as every column here.
ALTER TABLE tasks ADD COLUMN risk TEXT COLLATE "C" CHECK (risk IN ('low', 'medium', 'high'));
ALTER TABLE tasks ADD COLUMN impact TEXT COLLATE "C" CHECK (impact IN ('low', 'medium', 'high'));
-- The risks query reads the assessed unfinished tasks without scanning the rest.
CREATE INDEX idx_tasks_assessed ON tasks (id)
  WHERE deleted_at IS NULL AND (risk IS NOT NULL OR impact IS NOT NULL);
