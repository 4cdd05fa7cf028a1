-- Datasets for evaluations: examples (an input, optionally the output it
-- should give) kept per graph, readable by the graph's members. A dataset
-- is versioned: every change makes a new version, and an example is never
-- changed in place, only added in one version and removed in a later one,
-- so any version's examples read back as they were (an experiment names
-- the version it ran).
CREATE TABLE datasets (
    id          TEXT PRIMARY KEY NOT NULL,
    graph_id    TEXT NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    -- The latest version; 0 before the first example.
    version     BIGINT NOT NULL DEFAULT 0,
    created_by  TEXT REFERENCES users (id) ON DELETE SET NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    UNIQUE (graph_id, name)
);
CREATE TABLE dataset_examples (
    id          TEXT PRIMARY KEY NOT NULL,
    dataset_id  TEXT NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
    -- Where it stands in the dataset (ascending); an edit keeps its place.
    position    BIGINT NOT NULL,
    label       TEXT,
    input       TEXT NOT NULL,
    reference   TEXT,
    -- The run it was made from, if any.
    source_run  TEXT,
    added_in    BIGINT NOT NULL,
    removed_in  BIGINT
);
CREATE INDEX dataset_examples_by_dataset ON dataset_examples (dataset_id, position);
