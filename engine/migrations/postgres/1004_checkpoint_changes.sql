-- Checkpoints stored as changes (run::stored_state): a row holds its
-- state whole (a snapshot: `changes` is NULL) or as the changes from an
-- earlier checkpoint of the thread (`base_id`), in which case its body's
-- state is null. Every row of a chain names the chain's snapshot (the
-- snapshot names itself), so a checkpoint loads with one indexed read of
-- its chain; `budget` is what the chain may still grow by before the next
-- checkpoint is a snapshot. Rows stored before this name no snapshot:
-- they are snapshots.
ALTER TABLE heddle_checkpoints ADD COLUMN changes TEXT;
ALTER TABLE heddle_checkpoints ADD COLUMN base_id TEXT;
ALTER TABLE heddle_checkpoints ADD COLUMN snapshot_id TEXT;
ALTER TABLE heddle_checkpoints ADD COLUMN budget BIGINT NOT NULL DEFAULT 0;
CREATE INDEX heddle_checkpoints_by_snapshot ON heddle_checkpoints (snapshot_id, position)
    WHERE snapshot_id IS NOT NULL;
