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
    body          TEXT    NOT NULL,
    UNIQUE (thread_id, checkpoint_id)
);
CREATE INDEX heddle_checkpoints_by_thread ON heddle_checkpoints (thread_id, position);

-- Each run's events, numbered from 0 without gaps.
CREATE TABLE heddle_events (
    run_id TEXT    NOT NULL REFERENCES heddle_runs (run_id) ON DELETE CASCADE,
    seq    INTEGER NOT NULL,
    body   TEXT    NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
