-- Every saved version of every graph: a save inserts the new version here
-- and moves `graphs.version` on, in one transaction. Old versions can be
-- read and restored (restoring saves them as a new version).
CREATE TABLE graph_versions (
    graph_id    TEXT    NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    version     INTEGER NOT NULL,
    name        TEXT    NOT NULL,
    graph_json  TEXT    NOT NULL CHECK (json_valid(graph_json)),
    created_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (graph_id, version)
) WITHOUT ROWID;

INSERT INTO graph_versions (graph_id, version, name, graph_json, created_at)
SELECT id, version, name, graph_json, updated_at FROM graphs;

-- Threads: the conversations of a graph. Their checkpoints and messages
-- live in the engine's tables (heddle_checkpoints), keyed by thread id.
CREATE TABLE threads (
    id          TEXT PRIMARY KEY NOT NULL,
    graph_id    TEXT NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    updated_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX threads_by_graph ON threads (graph_id, updated_at DESC);

-- Runs as the app knows them: which graph version, which thread, what
-- input, where it stands. The engine keeps their checkpoints and events
-- (heddle_runs, heddle_checkpoints, heddle_events) under the same id.
CREATE TABLE runs (
    id             TEXT    PRIMARY KEY NOT NULL,
    graph_id       TEXT    NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    graph_version  INTEGER NOT NULL,
    thread_id      TEXT    NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    input          TEXT    NOT NULL CHECK (json_valid(input)),
    status         TEXT    NOT NULL CHECK (status IN
                       ('queued', 'running', 'interrupted', 'finished', 'failed', 'cancelled')),
    output         TEXT,
    error          TEXT,
    created_at     TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    started_at     TEXT,
    finished_at    TEXT
);
CREATE INDEX runs_by_graph ON runs (graph_id, created_at DESC);
CREATE INDEX runs_by_status ON runs (status);
