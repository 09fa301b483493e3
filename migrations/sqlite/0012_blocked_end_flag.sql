-- Arbeit schema v12: finishing, reopening or deleting a task writes a bounded number of rows,
-- however many tasks it blocks. Until v11, relationships.open_edge said "both ends of this live
-- blocks edge are live and unfinished", so finishing a task that blocks 200,000 others rewrote
-- 200,000 edge rows (seconds on SQLite, over ten on Postgres).
--
-- From v12 a task with more than 100 live blocks edges out is a hub, and the flag of a live
-- blocks edge X -> Y into a live, unfinished Y is:
--   2 when X is a hub: "read X's state", which readers look up in idx_tasks_unfinished;
--   1 when X is no hub and is itself live and unfinished (the v11 meaning);
--   0 otherwise, as is every other edge.
-- So finishing or reopening X rewrites its edges out only when it is no hub (at most 100 rows),
-- plus the edges into it (its blockers); an edge that makes X a hub, or the removal that makes it
-- none, rewrites X's edges once. Readers take 1 as open and probe the blocker only for 2.
-- As before, the flag is an index of the graph, not state anyone sets: no code writes it.
DROP TRIGGER trg_blocks_edge_added;
DROP TRIGGER trg_blocks_edge_removed;
DROP TRIGGER trg_task_finished_or_reopened;
DROP INDEX idx_relationships_open_blocks;

UPDATE relationships SET open_edge = CASE
  WHEN type <> 'blocks' OR removed_at IS NOT NULL THEN 0
  WHEN NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = relationships.to_task_id
                   AND t.deleted_at IS NULL AND t.status IN ('open', 'in_progress')) THEN 0
  WHEN (SELECT COUNT(*) FROM (SELECT 1 FROM relationships o WHERE o.from_task_id = relationships.from_task_id
          AND o.type = 'blocks' AND o.removed_at IS NULL LIMIT 101)) > 100 THEN 2
  WHEN EXISTS (SELECT 1 FROM tasks f WHERE f.id = relationships.from_task_id
               AND f.deleted_at IS NULL AND f.status IN ('open', 'in_progress')) THEN 1
  ELSE 0 END;

-- The flag is a column of the index too, so that telling 1 from 2 reads no table row.
CREATE INDEX idx_relationships_open_blocks ON relationships (to_task_id, from_task_id, open_edge)
  WHERE type = 'blocks' AND removed_at IS NULL AND open_edge > 0;

-- The live, unfinished tasks by id: "is this hub still unfinished?" answered from the index.
CREATE INDEX idx_tasks_unfinished ON tasks (id) WHERE deleted_at IS NULL AND status IN ('open', 'in_progress');

CREATE TRIGGER trg_blocks_edge_added AFTER INSERT ON relationships WHEN NEW.type = 'blocks'
BEGIN
  UPDATE relationships SET open_edge = CASE
    WHEN NEW.removed_at IS NOT NULL THEN 0
    WHEN NOT EXISTS (SELECT 1 FROM tasks WHERE id = NEW.to_task_id
                     AND deleted_at IS NULL AND status IN ('open', 'in_progress')) THEN 0
    WHEN (SELECT COUNT(*) FROM (SELECT 1 FROM relationships o WHERE o.from_task_id = NEW.from_task_id
            AND o.type = 'blocks' AND o.removed_at IS NULL LIMIT 101)) > 100 THEN 2
    WHEN EXISTS (SELECT 1 FROM tasks WHERE id = NEW.from_task_id
                 AND deleted_at IS NULL AND status IN ('open', 'in_progress')) THEN 1
    ELSE 0 END
  WHERE id = NEW.id;
END;

-- The edge that makes its blocker a hub: the blocker's other edges change meaning, once.
CREATE TRIGGER trg_blocks_hub_made AFTER INSERT ON relationships
WHEN NEW.type = 'blocks' AND NEW.removed_at IS NULL
  AND (SELECT COUNT(*) FROM (SELECT 1 FROM relationships o WHERE o.from_task_id = NEW.from_task_id
         AND o.type = 'blocks' AND o.removed_at IS NULL LIMIT 102)) = 101
BEGIN
  UPDATE relationships SET open_edge = CASE
    WHEN EXISTS (SELECT 1 FROM tasks t WHERE t.id = relationships.to_task_id
                 AND t.deleted_at IS NULL AND t.status IN ('open', 'in_progress')) THEN 2 ELSE 0 END
  WHERE from_task_id = NEW.from_task_id AND type = 'blocks' AND removed_at IS NULL;
END;

CREATE TRIGGER trg_blocks_edge_removed AFTER UPDATE OF removed_at ON relationships
WHEN NEW.removed_at IS NOT NULL AND NEW.open_edge > 0
BEGIN
  UPDATE relationships SET open_edge = 0 WHERE id = NEW.id;
END;

-- The removal that leaves a hub 100 edges: they take the v11 meaning back, once.
CREATE TRIGGER trg_blocks_hub_unmade AFTER UPDATE OF removed_at ON relationships
WHEN NEW.type = 'blocks' AND OLD.removed_at IS NULL AND NEW.removed_at IS NOT NULL
  AND (SELECT COUNT(*) FROM (SELECT 1 FROM relationships o WHERE o.from_task_id = NEW.from_task_id
         AND o.type = 'blocks' AND o.removed_at IS NULL LIMIT 101)) = 100
BEGIN
  UPDATE relationships SET open_edge = CASE
    WHEN EXISTS (SELECT 1 FROM tasks t WHERE t.id = relationships.to_task_id
                 AND t.deleted_at IS NULL AND t.status IN ('open', 'in_progress'))
     AND EXISTS (SELECT 1 FROM tasks f WHERE f.id = NEW.from_task_id
                 AND f.deleted_at IS NULL AND f.status IN ('open', 'in_progress')) THEN 1 ELSE 0 END
  WHERE from_task_id = NEW.from_task_id AND type = 'blocks' AND removed_at IS NULL;
END;

-- A task finishes or reopens: the edges into it (as many as it has blockers) follow its state.
CREATE TRIGGER trg_task_finished_or_reopened AFTER UPDATE OF status, deleted_at ON tasks
WHEN (OLD.deleted_at IS NULL AND OLD.status IN ('open', 'in_progress'))
  IS NOT (NEW.deleted_at IS NULL AND NEW.status IN ('open', 'in_progress'))
BEGIN
  UPDATE relationships SET open_edge = CASE
    WHEN NOT (NEW.deleted_at IS NULL AND NEW.status IN ('open', 'in_progress')) THEN 0
    WHEN (SELECT COUNT(*) FROM (SELECT 1 FROM relationships o WHERE o.from_task_id = relationships.from_task_id
            AND o.type = 'blocks' AND o.removed_at IS NULL LIMIT 101)) > 100 THEN 2
    WHEN EXISTS (SELECT 1 FROM tasks f WHERE f.id = relationships.from_task_id
                 AND f.deleted_at IS NULL AND f.status IN ('open', 'in_progress')) THEN 1
    ELSE 0 END
  WHERE to_task_id = NEW.id AND type = 'blocks' AND removed_at IS NULL;
END;

-- ... and the edges out of it, unless it is a hub (then they read 2, which its state leaves be).
CREATE TRIGGER trg_blocker_finished_or_reopened AFTER UPDATE OF status, deleted_at ON tasks
WHEN (OLD.deleted_at IS NULL AND OLD.status IN ('open', 'in_progress'))
  IS NOT (NEW.deleted_at IS NULL AND NEW.status IN ('open', 'in_progress'))
  AND (SELECT COUNT(*) FROM (SELECT 1 FROM relationships o WHERE o.from_task_id = NEW.id
         AND o.type = 'blocks' AND o.removed_at IS NULL LIMIT 101)) <= 100
BEGIN
  UPDATE relationships SET open_edge = CASE
    WHEN (NEW.deleted_at IS NULL AND NEW.status IN ('open', 'in_progress'))
     AND EXISTS (SELECT 1 FROM tasks t WHERE t.id = relationships.to_task_id
                 AND t.deleted_at IS NULL AND t.status IN ('open', 'in_progress')) THEN 1 ELSE 0 END
  WHERE from_task_id = NEW.id AND type = 'blocks' AND removed_at IS NULL;
END;
