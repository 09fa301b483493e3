-- Arbeit schema v6: a task may say how likely it is to go wrong (risk) and how much it matters if
-- it does (impact). Both are optional: NULL is "not assessed", which is every task older than v6.
ALTER TABLE tasks ADD COLUMN risk TEXT CHECK (risk IN ('low', 'medium', 'high'));
ALTER TABLE tasks ADD COLUMN impact TEXT CHECK (impact IN ('low', 'medium', 'high'));
-- The risks query reads the assessed unfinished tasks without scanning the rest.
CREATE INDEX idx_tasks_assessed ON tasks (id)
  WHERE deleted_at IS NULL AND (risk IS NOT NULL OR impact IS NOT NULL);
