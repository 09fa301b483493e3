-- Arbeit schema v12: finishing, reopening or deleting a task writes a handful of rows, however
-- many tasks it blocks. Until v11, relationships.open_edge said "both ends of this live blocks
-- edge are live and unfinished", so finishing a task that blocks 200,000 others rewrote 200,000
-- edge rows (seconds on SQLite, over ten on Postgres). From v12 the flag follows the blocked end
-- only: a live blocks edge into a live, unfinished task. The blocker's state is read where it is
-- needed, through idx_tasks_unfinished below (one lookup in a tree of unfinished task ids), so
-- the flag changes only when the blocked task itself finishes, reopens or is deleted or restored.
-- As before, the flag is an index of the graph, not state anyone sets: no code writes it.
DROP TRIGGER trg_blocks_edge_added;
DROP TRIGGER trg_blocks_edge_removed;
DROP TRIGGER trg_task_finished_or_reopened;

UPDATE relationships SET open_edge = type = 'blocks' AND removed_at IS NULL
  AND EXISTS (SELECT 1 FROM tasks t WHERE t.id = relationships.to_task_id
              AND t.deleted_at IS NULL AND t.status IN ('open', 'in_progress'));

-- The live, unfinished tasks by id: "is this blocker still unfinished?" answered from the index.
CREATE INDEX idx_tasks_unfinished ON tasks (id) WHERE deleted_at IS NULL AND status IN ('open', 'in_progress');

CREATE TRIGGER trg_blocks_edge_added AFTER INSERT ON relationships WHEN NEW.type = 'blocks'
BEGIN
  UPDATE relationships SET open_edge = NEW.removed_at IS NULL AND EXISTS (
    SELECT 1 FROM tasks WHERE id = NEW.to_task_id AND deleted_at IS NULL AND status IN ('open', 'in_progress'))
  WHERE id = NEW.id;
END;

CREATE TRIGGER trg_blocks_edge_removed AFTER UPDATE OF removed_at ON relationships
WHEN NEW.removed_at IS NOT NULL AND NEW.open_edge = 1
BEGIN
  UPDATE relationships SET open_edge = 0 WHERE id = NEW.id;
END;

-- Only the edges into the task change: as many as it has blockers.
CREATE TRIGGER trg_task_finished_or_reopened AFTER UPDATE OF status, deleted_at ON tasks
WHEN (OLD.deleted_at IS NULL AND OLD.status IN ('open', 'in_progress'))
  IS NOT (NEW.deleted_at IS NULL AND NEW.status IN ('open', 'in_progress'))
BEGIN
  UPDATE relationships SET open_edge = (NEW.deleted_at IS NULL AND NEW.status IN ('open', 'in_progress'))
  WHERE to_task_id = NEW.id AND type = 'blocks' AND removed_at IS NULL;
END;
