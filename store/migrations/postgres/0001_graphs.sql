-- The PostgreSQL schema mirrors migrations/sqlite/ file for file: the same
-- tables, columns and meaning (see the SQLite files' comments), in
-- PostgreSQL's types. Timestamps are the same ISO-8601 UTC text with
-- milliseconds, so they sort as text and copy between the two unchanged.
-- Tables whose lists show newest first get a `rowid` identity column: SQLite has one
-- implicitly, and the queries break ties in insertion order by it.
CREATE TABLE graphs (
    id          TEXT    PRIMARY KEY NOT NULL,
    name        TEXT    NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    graph_json  TEXT    NOT NULL CHECK (graph_json::jsonb IS NOT NULL),
    version     BIGINT  NOT NULL DEFAULT 1 CHECK (version >= 1),
    created_at  TEXT    NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    updated_at  TEXT    NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    rowid       BIGINT  GENERATED ALWAYS AS IDENTITY UNIQUE
);

CREATE INDEX graphs_by_updated_at ON graphs (updated_at DESC);
