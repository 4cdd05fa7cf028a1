-- Chat widgets: a chat bubble for a published chat graph on other sites
-- (docs/deploy-agents.md). The token is public (it sits in the embedding
-- page's source): what limits a widget is its list of allowed origins and
-- its rate limits. Its conversations are threads of the graph, run as the
-- person who made the widget.
CREATE TABLE widgets (
    id               TEXT PRIMARY KEY NOT NULL,
    graph_id         TEXT NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    name             TEXT NOT NULL,
    token            TEXT NOT NULL UNIQUE,
    allowed_origins  TEXT NOT NULL,
    title            TEXT NOT NULL,
    color            TEXT NOT NULL,
    greeting         TEXT,
    enabled          BOOLEAN NOT NULL DEFAULT TRUE,
    created_by       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at       TEXT NOT NULL
);
CREATE INDEX widgets_by_graph ON widgets (graph_id);
