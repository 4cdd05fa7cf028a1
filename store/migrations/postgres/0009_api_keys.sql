-- API keys: how scripts and other services call a user's published graphs
-- (docs/deploy-agents.md). Only a SHA-256 of the secret is stored; the
-- secret is shown once, when the key is made. A key works on the graphs
-- listed for it, with its owner's access to them, capped by its scope:
-- `run` (start runs of the published version, read the runs it started)
-- or `read` (also read the graphs, their runs and threads).
CREATE TABLE api_keys (
    id            TEXT PRIMARY KEY NOT NULL,
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    -- The key's first characters, shown in lists to tell keys apart.
    prefix        TEXT NOT NULL,
    secret_sha256 TEXT NOT NULL UNIQUE,
    scope         TEXT NOT NULL CHECK (scope IN ('run', 'read')),
    created_at    TEXT NOT NULL,
    expires_at    TEXT,
    last_used_at  TEXT,
    revoked_at    TEXT
);
CREATE INDEX api_keys_by_user ON api_keys (user_id);
CREATE TABLE api_key_graphs (
    key_id    TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    graph_id  TEXT NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    PRIMARY KEY (key_id, graph_id)
);
-- How a run started, shown wherever runs are listed: `app` (the editor or
-- the JSON API with a session), `api_key`, and the triggers to come. The
-- label names the key; the key's id lets it read the runs it started.
ALTER TABLE runs ADD COLUMN origin TEXT NOT NULL DEFAULT 'app';
ALTER TABLE runs ADD COLUMN origin_label TEXT;
ALTER TABLE runs ADD COLUMN api_key_id TEXT;
CREATE INDEX runs_by_api_key ON runs (api_key_id);
