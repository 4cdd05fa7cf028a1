-- Published versions: the version of a graph that calls from outside the
-- editor run (API keys, invoke, the chat endpoint, webhooks, schedules).
-- One row per published graph; it names a stored version, and goes with
-- its graph.
CREATE TABLE graph_publications (
    graph_id      TEXT    PRIMARY KEY NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    version       INTEGER NOT NULL,
    published_at  TEXT    NOT NULL,
    published_by  TEXT    REFERENCES users (id) ON DELETE SET NULL,
    FOREIGN KEY (graph_id, version) REFERENCES graph_versions (graph_id, version) ON DELETE CASCADE
);
