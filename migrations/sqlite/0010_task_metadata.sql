-- Arbeit schema v10: a task carries a JSON object of metadata that agents and integrations attach
-- (external ids, labels, estimates), stored as JSON text. NULL is "none", which is every task
-- older than v10.
ALTER TABLE tasks ADD COLUMN metadata TEXT;
