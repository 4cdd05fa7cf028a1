-- The engine's checkpoint store (run::sqlite). Versions from 1001 on, so
-- these migrations share a database with an application's own.

-- One row per run: what it executes and where it stands.
CREATE TABLE heddle_runs (
    run_id        TEXT    PRIMARY KEY NOT NULL,
    thread_id     TEXT    NOT NULL,
    graph         TEXT    NOT NULL CHECK (json_valid(graph)),
    status        TEXT    NOT NULL,
    created_at_us INTEGER NOT NULL,
    updated_at_us INTEGER NOT NULL
);
CREATE INDEX heddle_runs_by_thread ON heddle_runs (thread_id);
CREATE INDEX heddle_runs_by_status ON heddle_runs (status);

-- Checkpoints, in the order they were saved (`position`); `body` is the
-- whole checkpoint as JSON.
CREATE TABLE heddle_checkpoints (
    position      INTEGER PRIMARY KEY,
    thread_id     TEXT    NOT NULL,
    checkpoint_id TEXT    NOT NULL,
    run_id        TEXT    NOT NULL REFERENCES heddle_runs (run_id) ON DELETE CASCADE,
    parent_id     TEXT,
    step          INTEGER NOT NULL,
    status        TEXT    NOT NULL,
    created_at_us INTEGER NOT NULL,
    body          TEXT    NOT NULL
);
-- Checkpoint ids are `<run>/<seq>`, unique by construction; a lookup by id
-- goes through the thread's index (a rare, time-travel query), so a save
-- touches one index fewer.
CREATE INDEX heddle_checkpoints_by_thread ON heddle_checkpoints (thread_id, position);

-- Each run's events, numbered from 0 without gaps, stored as the batches
-- they were saved in (the events between two checkpoints): one row per
-- save keeps a step's write small. `body` is a JSON array of events
-- `first_seq` to `last_seq`.
CREATE TABLE heddle_events (
    run_id    TEXT    NOT NULL REFERENCES heddle_runs (run_id) ON DELETE CASCADE,
    first_seq INTEGER NOT NULL,
    last_seq  INTEGER NOT NULL,
    body      TEXT    NOT NULL,
    PRIMARY KEY (run_id, first_seq)
) WITHOUT ROWID;

-- Saving a checkpoint with its events is one INSERT into this view: the
-- trigger writes the events, the checkpoint and the run's status in the
-- statement's own transaction, so a save costs one round trip to SQLite.
CREATE VIEW heddle_saves AS
SELECT NULL AS thread_id, NULL AS checkpoint_id, NULL AS run_id, NULL AS parent_id, NULL AS step,
       NULL AS status, NULL AS created_at_us, NULL AS body,
       NULL AS events, NULL AS first_seq, NULL AS last_seq
WHERE 0;

CREATE TRIGGER heddle_save INSTEAD OF INSERT ON heddle_saves
BEGIN
    INSERT INTO heddle_events (run_id, first_seq, last_seq, body)
    SELECT NEW.run_id, NEW.first_seq, NEW.last_seq, NEW.events WHERE NEW.events IS NOT NULL;
    INSERT INTO heddle_checkpoints
        (thread_id, checkpoint_id, run_id, parent_id, step, status, created_at_us, body)
    VALUES
        (NEW.thread_id, NEW.checkpoint_id, NEW.run_id, NEW.parent_id, NEW.step, NEW.status,
         NEW.created_at_us, NEW.body);
    -- Most saves leave the status as it was: skip the write then.
    UPDATE heddle_runs SET status = NEW.status, updated_at_us = NEW.created_at_us
    WHERE run_id = NEW.run_id AND status <> NEW.status;
END;
