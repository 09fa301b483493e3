-- Arbeit schema v13: claiming the best ready task no longer steps over blocked tasks. Ready work
-- is read from idx_tasks_ready_leaves in priority order, and until v12 each task there was checked
-- for an open blocker as the scan met it: at the head of a large project, where blocked tasks
-- gather, most of a claim went to stepping over them, again for every claim.
--
-- Each task now carries how many edges into it read open_edge = 1 (a live blocks edge from a
-- blocker that is no hub and is itself live and unfinished, into a live, unfinished task). The
-- triggers below keep it in the same transaction as the flag changes, and the flag changes only
-- by triggers, so a blocked task whose blockers are no hubs leaves the ready index. Edges from a
-- hub (open_edge = 2) are not counted: finishing a hub still writes no row per edge, and readers
-- still look the hub up as before. As open_children is, an index of the graph that no code writes.
ALTER TABLE tasks ADD COLUMN open_blockers INTEGER NOT NULL DEFAULT 0;

-- (The count names the terms of idx_relationships_open_blocks, so that it reads only that index.)
UPDATE tasks SET open_blockers = (SELECT COUNT(*) FROM relationships r
    WHERE r.to_task_id = tasks.id AND r.type = 'blocks' AND r.removed_at IS NULL AND r.open_edge > 0
      AND r.open_edge = 1)
  WHERE id IN (SELECT to_task_id FROM relationships WHERE open_edge = 1);

-- A row's NEW here is the row as inserted: a trigger that then sets its flag is counted by the
-- update trigger below, whichever of the two runs first.
CREATE TRIGGER trg_open_blocker_added AFTER INSERT ON relationships WHEN NEW.open_edge = 1
BEGIN
  UPDATE tasks SET open_blockers = open_blockers + 1 WHERE id = NEW.to_task_id;
END;

-- Fired as well by the flag triggers' own updates (SQLite runs a trigger for a statement of
-- another trigger; recursive_triggers only stops a trigger firing itself).
CREATE TRIGGER trg_open_blocker_changed AFTER UPDATE ON relationships
WHEN (OLD.open_edge = 1 OR NEW.open_edge = 1)
  AND (OLD.open_edge IS NOT NEW.open_edge OR OLD.to_task_id IS NOT NEW.to_task_id)
BEGIN
  UPDATE tasks SET open_blockers = open_blockers - 1 WHERE id = OLD.to_task_id AND OLD.open_edge = 1;
  UPDATE tasks SET open_blockers = open_blockers + 1 WHERE id = NEW.to_task_id AND NEW.open_edge = 1;
END;

CREATE TRIGGER trg_open_blocker_deleted AFTER DELETE ON relationships WHEN OLD.open_edge = 1
BEGIN
  UPDATE tasks SET open_blockers = open_blockers - 1 WHERE id = OLD.to_task_id;
END;

-- Ready work leaves out a task with an open blocker that is no hub without reading it; a task
-- blocked only by a hub stays in the index, and readers check hubs as before.
DROP INDEX idx_tasks_ready_leaves;
CREATE INDEX idx_tasks_ready_leaves ON tasks (priority, created_at, id, owner)
  WHERE deleted_at IS NULL AND status = 'open' AND lease_expires_at IS NULL AND open_children = 0
    AND open_blockers = 0;
