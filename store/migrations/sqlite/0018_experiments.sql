-- Experiments: a graph version run over a dataset version, each example
-- (times its repetitions) as an ordinary run, scored when it ends. An
-- experiment is driven by one server at a time (its lease, like a run's);
-- another takes it over when that lease lapses, so a restart loses none.
CREATE TABLE experiments (
    id              TEXT PRIMARY KEY NOT NULL,
    graph_id        TEXT NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    graph_version   BIGINT NOT NULL,
    dataset_id      TEXT NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
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
