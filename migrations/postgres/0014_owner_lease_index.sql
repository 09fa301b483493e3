-- Arbeit schema v14 on Postgres: the owner index carries the lease, so an agent's assigned tasks
-- that no session holds are found in it, not by fetching every task the agent owns; and
-- idx_tasks_ready_free, which no statement reads, is gone. As migrations/sqlite/0014, which
-- states why.
DROP INDEX idx_tasks_owner;
CREATE INDEX idx_tasks_owner ON tasks (owner, lease_expires_at) WHERE deleted_at IS NULL AND owner IS NOT NULL;
DROP INDEX idx_tasks_ready_free;
