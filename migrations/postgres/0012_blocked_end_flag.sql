-- Arbeit schema v12 on Postgres: finishing, reopening or deleting a task writes a bounded number
-- of rows, however many tasks it blocks; as migrations/sqlite/0012, which states the rule. A task
-- with more than 100 live blocks edges out is a hub; a live blocks edge X -> Y into a live,
-- unfinished Y reads 2 when X is a hub (readers look X up in idx_tasks_unfinished), 1 when X is
-- no hub and live and unfinished, and 0 otherwise, as does every other edge.
CREATE FUNCTION arbeit_task_unfinished(task TEXT) RETURNS BOOLEAN LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM tasks WHERE id = task AND deleted_at IS NULL AND status IN ('open', 'in_progress'))
$$;

-- Live blocks edges out of a task, counted no further than `upto`.
CREATE FUNCTION arbeit_blocks_out(task TEXT, upto INTEGER) RETURNS INTEGER LANGUAGE sql STABLE AS $$
  SELECT COUNT(*)::INTEGER FROM (SELECT 1 FROM relationships
    WHERE from_task_id = task AND type = 'blocks' AND removed_at IS NULL LIMIT upto) s
$$;

-- The flag of a live blocks edge, by the rule above (the edge itself counted among X's).
CREATE FUNCTION arbeit_edge_flag(from_id TEXT, to_id TEXT) RETURNS INTEGER LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN NOT arbeit_task_unfinished(to_id) THEN 0
              WHEN arbeit_blocks_out(from_id, 101) > 100 THEN 2
              WHEN arbeit_task_unfinished(from_id) THEN 1 ELSE 0 END
$$;

UPDATE relationships SET open_edge = CASE WHEN type = 'blocks' AND removed_at IS NULL
  THEN arbeit_edge_flag(from_task_id, to_task_id) ELSE 0 END
WHERE open_edge <> CASE WHEN type = 'blocks' AND removed_at IS NULL
  THEN arbeit_edge_flag(from_task_id, to_task_id) ELSE 0 END;

DROP INDEX idx_relationships_open_blocks;
-- The flag is a column of the index too, so that telling 1 from 2 reads no table row.
CREATE INDEX idx_relationships_open_blocks ON relationships (to_task_id, from_task_id, open_edge)
  WHERE type = 'blocks' AND removed_at IS NULL AND open_edge > 0;
CREATE INDEX idx_tasks_unfinished ON tasks (id) WHERE deleted_at IS NULL AND status IN ('open', 'in_progress');

-- A new edge (before it is written, so it counts itself in: hence 100 others make a hub).
CREATE OR REPLACE FUNCTION arbeit_blocks_edge_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.removed_at IS NOT NULL THEN
    NEW.open_edge := 0;
  ELSIF NOT arbeit_task_unfinished(NEW.to_task_id) THEN
    NEW.open_edge := 0;
  ELSIF arbeit_blocks_out(NEW.from_task_id, 100) >= 100 THEN
    NEW.open_edge := 2;
  ELSIF arbeit_task_unfinished(NEW.from_task_id) THEN
    NEW.open_edge := 1;
  ELSE
    NEW.open_edge := 0;
  END IF;
  RETURN NEW;
END
$$;

DROP TRIGGER trg_blocks_edge_removed ON relationships;
CREATE TRIGGER trg_blocks_edge_removed BEFORE UPDATE OF removed_at ON relationships
  FOR EACH ROW WHEN (NEW.type = 'blocks' AND NEW.removed_at IS NOT NULL AND NEW.open_edge > 0)
  EXECUTE FUNCTION arbeit_blocks_edge_changed();

-- The edge that makes its blocker a hub, or the removal that leaves it 100: the blocker's other
-- edges change meaning, once.
CREATE FUNCTION arbeit_blocks_hub_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  edges INTEGER := arbeit_blocks_out(NEW.from_task_id, 102);
BEGIN
  IF TG_OP = 'INSERT' AND NEW.removed_at IS NULL AND edges = 101 THEN
    UPDATE relationships SET open_edge = CASE WHEN arbeit_task_unfinished(to_task_id) THEN 2 ELSE 0 END
     WHERE from_task_id = NEW.from_task_id AND type = 'blocks' AND removed_at IS NULL;
  ELSIF TG_OP = 'UPDATE' AND OLD.removed_at IS NULL AND NEW.removed_at IS NOT NULL AND edges = 100 THEN
    UPDATE relationships SET open_edge = CASE
        WHEN arbeit_task_unfinished(to_task_id) AND arbeit_task_unfinished(from_task_id) THEN 1 ELSE 0 END
     WHERE from_task_id = NEW.from_task_id AND type = 'blocks' AND removed_at IS NULL;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER trg_blocks_hub_made AFTER INSERT ON relationships
  FOR EACH ROW WHEN (NEW.type = 'blocks' AND NEW.removed_at IS NULL) EXECUTE FUNCTION arbeit_blocks_hub_changed();
CREATE TRIGGER trg_blocks_hub_unmade AFTER UPDATE OF removed_at ON relationships
  FOR EACH ROW WHEN (NEW.type = 'blocks' AND OLD.removed_at IS NULL AND NEW.removed_at IS NOT NULL)
  EXECUTE FUNCTION arbeit_blocks_hub_changed();

-- A task finishes or reopens: the edges into it follow its state, and the edges out of it too
-- unless it is a hub (then they read 2, which its state leaves be).
CREATE OR REPLACE FUNCTION arbeit_task_openness_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  unfinished BOOLEAN := NEW.deleted_at IS NULL AND NEW.status IN ('open', 'in_progress');
BEGIN
  UPDATE relationships SET open_edge = CASE WHEN unfinished THEN arbeit_edge_flag(from_task_id, to_task_id) ELSE 0 END
   WHERE to_task_id = NEW.id AND type = 'blocks' AND removed_at IS NULL;
  IF arbeit_blocks_out(NEW.id, 101) <= 100 THEN
    UPDATE relationships SET open_edge = CASE WHEN unfinished AND arbeit_task_unfinished(to_task_id) THEN 1 ELSE 0 END
     WHERE from_task_id = NEW.id AND type = 'blocks' AND removed_at IS NULL;
  END IF;
  RETURN NULL;
END
$$;

DROP FUNCTION arbeit_edge_is_open(TEXT, TEXT);
