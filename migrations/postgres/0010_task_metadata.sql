-- Arbeit schema v10 on Postgres: a task's metadata object as JSON text; as migrations/sqlite/0010.
-- NULL is "none". Text in C collation, as every column here: it comes back byte for byte.
ALTER TABLE tasks ADD COLUMN metadata TEXT COLLATE "C";
