CREATE TABLE users (
    id             TEXT    PRIMARY KEY NOT NULL,
    -- Unique in its NFKC, case-folded form (username_key, 0004); SQLite's
    -- NOCASE collation has no PostgreSQL twin and is not needed for that.
    username       TEXT    NOT NULL UNIQUE CHECK (length(username) BETWEEN 1 AND 64),
    password_hash  TEXT    NOT NULL,
    session_epoch  BIGINT  NOT NULL DEFAULT 0,
    created_at     TEXT    NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
);

ALTER TABLE graphs ADD COLUMN owner_id TEXT REFERENCES users (id) ON DELETE SET NULL;
CREATE INDEX graphs_by_owner ON graphs (owner_id, updated_at DESC);

ALTER TABLE graph_versions ADD COLUMN author_id TEXT REFERENCES users (id) ON DELETE SET NULL;

ALTER TABLE runs ADD COLUMN user_id TEXT REFERENCES users (id) ON DELETE SET NULL;
CREATE INDEX runs_by_user_status ON runs (user_id, status);

CREATE TABLE graph_members (
    graph_id    TEXT NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role        TEXT NOT NULL CHECK (role IN ('viewer', 'editor')),
    created_at  TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    PRIMARY KEY (graph_id, user_id)
);
CREATE INDEX graph_members_by_user ON graph_members (user_id);

CREATE TABLE share_links (
    id          TEXT    PRIMARY KEY NOT NULL,
    token       TEXT    NOT NULL UNIQUE,
    graph_id    TEXT    NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    role        TEXT    NOT NULL CHECK (role IN ('viewer', 'editor')),
    run_id      TEXT,
    step        BIGINT,
    created_by  TEXT    REFERENCES users (id) ON DELETE SET NULL,
    created_at  TEXT    NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    expires_at  TEXT,
    revoked_at  TEXT,
    rowid       BIGINT  GENERATED ALWAYS AS IDENTITY UNIQUE
);
CREATE INDEX share_links_by_graph ON share_links (graph_id, created_at DESC);

CREATE TABLE link_grants (
    link_id     TEXT NOT NULL REFERENCES share_links (id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at  TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    PRIMARY KEY (link_id, user_id)
);
CREATE INDEX link_grants_by_user ON link_grants (user_id);

CREATE TABLE secrets (
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
    value       TEXT NOT NULL,
    created_at  TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    updated_at  TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    PRIMARY KEY (user_id, name)
);

CREATE TABLE sessions (
    id           TEXT    PRIMARY KEY NOT NULL,
    data         BYTEA   NOT NULL,
    expiry_date  BIGINT  NOT NULL
);
CREATE INDEX sessions_by_expiry ON sessions (expiry_date);
