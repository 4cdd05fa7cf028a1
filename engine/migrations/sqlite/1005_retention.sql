-- Retention (run::prune): what a prune must keep besides a thread's
-- newest checkpoints, pauses, fork points and each run's last checkpoint:
-- checkpoints that other features name (an evaluation's, a published
-- example's), each pinned by what names it (`kind`, `id`).
CREATE TABLE heddle_pins (
    kind          TEXT    NOT NULL,
    id            TEXT    NOT NULL,
    thread_id     TEXT    NOT NULL,
    checkpoint_id TEXT    NOT NULL,
    created_at_us INTEGER NOT NULL,
    PRIMARY KEY (kind, id, thread_id, checkpoint_id)
) WITHOUT ROWID;
CREATE INDEX heddle_pins_by_thread ON heddle_pins (thread_id);

-- A prune may remove a checkpoint that a process still holds as the base
-- of the thread's next one: a row of changes is refused when its base is
-- no longer stored, and the store writes it whole instead. SQLite
-- serialises writers, so the check and a prune never interleave. The
-- base is almost always the newest row of its chain: the index is read
-- from the end.
DROP TRIGGER heddle_save;
CREATE TRIGGER heddle_save INSTEAD OF INSERT ON heddle_saves
BEGIN
    SELECT RAISE(ABORT, 'heddle: the base checkpoint is no longer stored')
    WHERE NEW.base_id IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM heddle_checkpoints
        WHERE snapshot_id = NEW.snapshot_id AND checkpoint_id = NEW.base_id
        ORDER BY position DESC LIMIT 1);
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
