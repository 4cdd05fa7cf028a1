-- Experiments: a graph version run over a dataset version, each example
-- (times its repetitions) as an ordinary run, scored when it ends. An
-- experiment is driven by one server at a time (its lease, like a run's);
-- another takes it over when that lease lapses, so a restart loses none.
CREATE TABLE experiments (
    id              TEXT PRIMARY KEY NOT NULL,
    graph_id        TEXT NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    graph_version   BIGINT NOT NULL,
    -- Not cascading: a dataset with experiments is not deleted (their
    -- results would go with it); the graph's deletion takes both.
    dataset_id      TEXT NOT NULL REFERENCES datasets (id),
    dataset_version BIGINT NOT NULL,
    name            TEXT NOT NULL,
    -- The scorers, as JSON (a list of the engine's scorer specs).
    scorers         TEXT NOT NULL,
    repetitions     BIGINT NOT NULL,
    -- Ceilings: past either, no more examples start and those running
    -- are cancelled.
    max_tokens      BIGINT,
    max_cost_nanos  BIGINT,
    -- running, finished, cancelled or stopped (a ceiling was reached,
    -- or its maker lost the right to run the graph).
    status          TEXT NOT NULL,
    stop_reason     TEXT,
    created_by      TEXT REFERENCES users (id) ON DELETE SET NULL,
    -- The API key it was started with, if any.
    api_key_id      TEXT,
    created_at      TEXT NOT NULL,
    ended_at        TEXT,
    driver          TEXT,
    driver_until    TEXT
);
CREATE INDEX experiments_by_graph ON experiments (graph_id, created_at);
CREATE INDEX experiments_running ON experiments (status);
-- One row per example and repetition: the key that makes each run at
-- most once. `run_id` is chosen before the run is recorded (the run is
-- recorded with that id), so after a crash the driver finds out whether
-- it was.
CREATE TABLE experiment_items (
    experiment_id   TEXT NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
    example_id      TEXT NOT NULL,
    repetition      BIGINT NOT NULL,
    position        BIGINT NOT NULL,
    run_id          TEXT,
    -- pending, started, scored, failed (the run did not finish), skipped.
    status          TEXT NOT NULL,
    output          TEXT,
    -- The scores, as JSON: [{"scorer", "value", "reason"}].
    scores          TEXT,
    tokens          BIGINT,
    cost_nanos      BIGINT,
    latency_ms      BIGINT,
    error           TEXT,
    PRIMARY KEY (experiment_id, example_id, repetition)
);
CREATE INDEX experiment_items_by_status ON experiment_items (experiment_id, status, position);
ALTER TABLE runs ADD COLUMN experiment_id TEXT;
CREATE INDEX runs_by_experiment ON runs (experiment_id);
-- A graph's gate on publishing: a version goes live only when its newest
-- finished experiment on this dataset version scores, per scorer, no
-- worse than the live version's less the scorer's tolerance. The dataset
-- is not deleted while it gates (the key does not cascade).
CREATE TABLE publish_gates (
    graph_id        TEXT PRIMARY KEY NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    dataset_id      TEXT NOT NULL REFERENCES datasets (id),
    dataset_version BIGINT NOT NULL,
    -- JSON: {"scorer": tolerance}; a scorer not named has `tolerance`.
    tolerances      TEXT NOT NULL,
    tolerance       REAL NOT NULL DEFAULT 0,
    set_by          TEXT REFERENCES users (id) ON DELETE SET NULL,
    set_at          TEXT NOT NULL
);
