-- Graphs: the user's graph documents (the engine's JSON format).
-- `version` starts at 1 and every save increments it; a save names the
-- version it was based on, so concurrent edits are detected, not lost.
-- Timestamps are ISO-8601 UTC text written by SQLite, so they sort as text.
CREATE TABLE graphs (
    id          TEXT    PRIMARY KEY NOT NULL,
    name        TEXT    NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    graph_json  TEXT    NOT NULL CHECK (json_valid(graph_json)),
    version     INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
    created_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    updated_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE INDEX graphs_by_updated_at ON graphs (updated_at DESC);
