-- Arbeit schema v12 on Postgres: relationships.open_edge follows the blocked end only (a live
-- blocks edge into a live, unfinished task), so finishing, reopening or deleting a task that
-- blocks 200,000 others writes a handful of rows instead of rewriting 200,000 edge rows; the
-- blocker's state is read where needed through idx_tasks_unfinished. As migrations/sqlite/0012.
UPDATE relationships SET open_edge = CASE WHEN type = 'blocks' AND removed_at IS NULL
  AND EXISTS (SELECT 1 FROM tasks t WHERE t.id = relationships.to_task_id
              AND t.deleted_at IS NULL AND t.status IN ('open', 'in_progress')) THEN 1 ELSE 0 END
WHERE open_edge <> CASE WHEN type = 'blocks' AND removed_at IS NULL
  AND EXISTS (SELECT 1 FROM tasks t WHERE t.id = relationships.to_task_id
              AND t.deleted_at IS NULL AND t.status IN ('open', 'in_progress')) THEN 1 ELSE 0 END;

CREATE INDEX idx_tasks_unfinished ON tasks (id) WHERE deleted_at IS NULL AND status IN ('open', 'in_progress');

-- A new or restored edge is open while the task it points into is live and unfinished.
CREATE OR REPLACE FUNCTION arbeit_blocks_edge_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.removed_at IS NOT NULL THEN
    NEW.open_edge := 0;
  ELSIF EXISTS (SELECT 1 FROM tasks WHERE id = NEW.to_task_id
                AND deleted_at IS NULL AND status IN ('open', 'in_progress')) THEN
    NEW.open_edge := 1;
  ELSE
    NEW.open_edge := 0;
  END IF;
  RETURN NEW;
END
$$;

-- Only the edges into the task change: as many as it has blockers.
CREATE OR REPLACE FUNCTION arbeit_task_openness_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE relationships
     SET open_edge = CASE WHEN NEW.deleted_at IS NULL AND NEW.status IN ('open', 'in_progress') THEN 1 ELSE 0 END
   WHERE to_task_id = NEW.id AND type = 'blocks' AND removed_at IS NULL;
  RETURN NULL;
END
$$;

DROP FUNCTION arbeit_edge_is_open(TEXT, TEXT);
