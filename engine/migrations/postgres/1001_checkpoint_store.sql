-- The engine's checkpoint store on PostgreSQL (run::postgres): the tables
-- of the SQLite store (migrations/sqlite), in PostgreSQL's types. Versions
-- from 1001 on, so these migrations share a database with an
-- application's own. A save is one statement (see run::postgres), so there
-- is no view or trigger here.

-- One row per run: what it executes and where it stands.
CREATE TABLE heddle_runs (
    run_id        TEXT   PRIMARY KEY,
    thread_id     TEXT   NOT NULL,
    graph         TEXT   NOT NULL CHECK (graph::jsonb IS NOT NULL),
    status        TEXT   NOT NULL,
    created_at_us BIGINT NOT NULL,
    updated_at_us BIGINT NOT NULL
);
CREATE INDEX heddle_runs_by_thread ON heddle_runs (thread_id);
CREATE INDEX heddle_runs_by_status ON heddle_runs (status);

-- Checkpoints, in the order they were saved (`position`); `body` is the
-- whole checkpoint as JSON.
CREATE TABLE heddle_checkpoints (
    position      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    thread_id     TEXT   NOT NULL,
    checkpoint_id TEXT   NOT NULL,
    run_id        TEXT   NOT NULL REFERENCES heddle_runs (run_id) ON DELETE CASCADE,
    parent_id     TEXT,
    step          BIGINT NOT NULL,
    status        TEXT   NOT NULL,
    created_at_us BIGINT NOT NULL,
    body          TEXT   NOT NULL
);
-- Checkpoint ids are `<run>/<seq>`, unique by construction; a lookup by id
-- goes through the thread's index (a rare, time-travel query), so a save
-- touches one index fewer.
CREATE INDEX heddle_checkpoints_by_thread ON heddle_checkpoints (thread_id, position);
-- The foreign key's own index, so deleting a run does not scan the table.
CREATE INDEX heddle_checkpoints_by_run ON heddle_checkpoints (run_id);

-- Each run's events, numbered from 0 without gaps, stored as the batches
-- they were saved in (the events between two checkpoints): one row per
-- save keeps a step's write small. `body` is a JSON array of events
-- `first_seq` to `last_seq`. The primary key refuses a batch stored twice
-- (and makes the second of two concurrent writers of it fail); a save
-- checks that a batch begins right after the stored log.
CREATE TABLE heddle_events (
    run_id    TEXT   NOT NULL REFERENCES heddle_runs (run_id) ON DELETE CASCADE,
    first_seq BIGINT NOT NULL,
    last_seq  BIGINT NOT NULL CHECK (last_seq >= first_seq),
    body      TEXT   NOT NULL,
    PRIMARY KEY (run_id, first_seq)
);
