CREATE TABLE graph_versions (
    graph_id    TEXT    NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    version     BIGINT  NOT NULL,
    name        TEXT    NOT NULL,
    graph_json  TEXT    NOT NULL CHECK (graph_json::jsonb IS NOT NULL),
    created_at  TEXT    NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    PRIMARY KEY (graph_id, version)
);

CREATE TABLE threads (
    id          TEXT PRIMARY KEY NOT NULL,
    graph_id    TEXT NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    created_at  TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    updated_at  TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
);
CREATE INDEX threads_by_graph ON threads (graph_id, updated_at DESC);

CREATE TABLE runs (
    id             TEXT    PRIMARY KEY NOT NULL,
    graph_id       TEXT    NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    graph_version  BIGINT  NOT NULL,
    thread_id      TEXT    NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    input          TEXT    NOT NULL CHECK (input::jsonb IS NOT NULL),
    status         TEXT    NOT NULL CHECK (status IN
                       ('queued', 'running', 'interrupted', 'finished', 'failed', 'cancelled')),
    output         TEXT,
    error          TEXT,
    created_at     TEXT    NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    started_at     TEXT,
    finished_at    TEXT,
    rowid          BIGINT  GENERATED ALWAYS AS IDENTITY UNIQUE
);
CREATE INDEX runs_by_graph ON runs (graph_id, created_at DESC);
CREATE INDEX runs_by_status ON runs (status);
