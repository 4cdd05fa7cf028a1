-- Accounts, ownership, sharing and secrets.
--
-- Every graph has an owner. The owner grants teammates a role directly
-- (graph_members) or through a share link (share_links): opening a link
-- while logged in records a link_grant, which gives the link's role for as
-- long as the link is neither revoked nor expired. Graphs made before
-- accounts existed have no owner; the first account created claims them.

CREATE TABLE users (
    id             TEXT    PRIMARY KEY NOT NULL,
    username       TEXT    NOT NULL UNIQUE COLLATE NOCASE
                           CHECK (length(username) BETWEEN 1 AND 64),
    -- An argon2id PHC string; never the password.
    password_hash  TEXT    NOT NULL,
    -- Moves on at every password change: sessions made before it end.
    session_epoch  INTEGER NOT NULL DEFAULT 0,
    created_at     TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

ALTER TABLE graphs ADD COLUMN owner_id TEXT REFERENCES users (id) ON DELETE SET NULL;
CREATE INDEX graphs_by_owner ON graphs (owner_id, updated_at DESC);

-- Who saved each version (for the history panel); NULL before accounts.
ALTER TABLE graph_versions ADD COLUMN author_id TEXT REFERENCES users (id) ON DELETE SET NULL;

-- Who started each run (for runs-per-user limits, history and credentials).
ALTER TABLE runs ADD COLUMN user_id TEXT REFERENCES users (id) ON DELETE SET NULL;
CREATE INDEX runs_by_user_status ON runs (user_id, status);

CREATE TABLE graph_members (
    graph_id    TEXT NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role        TEXT NOT NULL CHECK (role IN ('viewer', 'editor')),
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (graph_id, user_id)
) WITHOUT ROWID;
CREATE INDEX graph_members_by_user ON graph_members (user_id);

CREATE TABLE share_links (
    id          TEXT    PRIMARY KEY NOT NULL,
    -- 256 random bits, base64url: the secret part of the link.
    token       TEXT    NOT NULL UNIQUE,
    graph_id    TEXT    NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    role        TEXT    NOT NULL CHECK (role IN ('viewer', 'editor')),
    -- A link to a run (and a step in it) opens that run's replay there.
    run_id      TEXT,
    step        INTEGER,
    created_by  TEXT    REFERENCES users (id) ON DELETE SET NULL,
    created_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    expires_at  TEXT,
    revoked_at  TEXT
);
CREATE INDEX share_links_by_graph ON share_links (graph_id, created_at DESC);

CREATE TABLE link_grants (
    link_id     TEXT NOT NULL REFERENCES share_links (id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (link_id, user_id)
) WITHOUT ROWID;
CREATE INDEX link_grants_by_user ON link_grants (user_id);

-- Credentials (model API keys, tool tokens), per user, referred to from
-- graphs by name. Values never leave the server once saved.
CREATE TABLE secrets (
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
    value       TEXT NOT NULL,
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    updated_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (user_id, name)
) WITHOUT ROWID;

-- tower-sessions' records (see server/src/sessions.rs).
CREATE TABLE sessions (
    id           TEXT    PRIMARY KEY NOT NULL,
    data         BLOB    NOT NULL,
    expiry_date  INTEGER NOT NULL
);
CREATE INDEX sessions_by_expiry ON sessions (expiry_date);
