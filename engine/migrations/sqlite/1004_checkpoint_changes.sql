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
ALTER TABLE heddle_checkpoints ADD COLUMN budget INTEGER NOT NULL DEFAULT 0;
CREATE INDEX heddle_checkpoints_by_snapshot ON heddle_checkpoints (snapshot_id, position)
    WHERE snapshot_id IS NOT NULL;
-- A run's last checkpoint holds its final state, which the run's record
-- no longer repeats (PostgreSQL has this index since 1001).
CREATE INDEX heddle_checkpoints_by_run_position ON heddle_checkpoints (run_id, position);

-- The one-statement save (migration 1001) with the new columns.
DROP TRIGGER heddle_save;
DROP VIEW heddle_saves;
CREATE VIEW heddle_saves AS
SELECT NULL AS thread_id, NULL AS checkpoint_id, NULL AS run_id, NULL AS parent_id, NULL AS step,
       NULL AS status, NULL AS created_at_us, NULL AS body,
       NULL AS changes, NULL AS base_id, NULL AS snapshot_id, NULL AS budget,
       NULL AS events, NULL AS first_seq, NULL AS last_seq
WHERE 0;

CREATE TRIGGER heddle_save INSTEAD OF INSERT ON heddle_saves
BEGIN
    INSERT INTO heddle_events (run_id, first_seq, last_seq, body)
    SELECT NEW.run_id, NEW.first_seq, NEW.last_seq, NEW.events WHERE NEW.events IS NOT NULL;
    INSERT INTO heddle_checkpoints
        (thread_id, checkpoint_id, run_id, parent_id, step, status, created_at_us, body,
         changes, base_id, snapshot_id, budget)
    VALUES
        (NEW.thread_id, NEW.checkpoint_id, NEW.run_id, NEW.parent_id, NEW.step, NEW.status,
         NEW.created_at_us, NEW.body, NEW.changes, NEW.base_id, NEW.snapshot_id, NEW.budget);
    -- Most saves leave the status as it was: skip the write then.
    UPDATE heddle_runs SET status = NEW.status, updated_at_us = NEW.created_at_us
    WHERE run_id = NEW.run_id AND status <> NEW.status;
END;
