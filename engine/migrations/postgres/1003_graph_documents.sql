-- Each distinct graph document is stored once, under the SHA-256 of its
-- text: a run refers to it by `graph_hash`. Runs recorded before this
-- migration keep their own copy in `heddle_runs.graph`; newer runs store
-- JSON `null` there. A document is deleted with the last run that refers
-- to it.
CREATE TABLE heddle_graphs (
    hash     TEXT PRIMARY KEY NOT NULL,
    document TEXT NOT NULL
);
ALTER TABLE heddle_runs ADD COLUMN graph_hash TEXT REFERENCES heddle_graphs (hash);
CREATE INDEX heddle_runs_by_graph_hash ON heddle_runs (graph_hash);
