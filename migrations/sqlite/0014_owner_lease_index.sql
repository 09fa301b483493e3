-- Arbeit schema v14: an agent's assigned tasks that no session holds are read from the index.
-- Resuming a session with no claims of its own reads its agent's unfinished tasks whose lease is
-- absent or lapsed. Until v13 the owner index held the owner alone, so that read fetched every
-- task the agent owned to find the unheld ones, and an agent's tasks are mostly held: at 100,000
-- tasks about 300 rows read to return none. With the lease in the index the read seeks the
-- unheld ones directly (no lease, then lapsed leases), and reads by owner alone still use it.
DROP INDEX idx_tasks_owner;
CREATE INDEX idx_tasks_owner ON tasks (owner, lease_expires_at) WHERE deleted_at IS NULL AND owner IS NOT NULL;

-- No statement reads it: ready work and the graph analysis read idx_tasks_ready_leaves, which
-- leaves out more; it only cost a write per claim, release and status change.
DROP INDEX idx_tasks_ready_free;
