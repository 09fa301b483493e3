-- Arbeit schema v5: memory that is set again is reinforced. `reinforced` counts the times a live
-- entry was set (1 when first set, and for every entry older than v5); updated_at is when it last
-- was. Briefings rank memory by both, and a scope at its cap of entries evicts the lowest.
ALTER TABLE memory ADD COLUMN reinforced INTEGER NOT NULL DEFAULT 1 CHECK (reinforced >= 1);
