-- Triggers that start runs of a graph's published version from outside
-- the editor (docs/deploy-agents.md). Each acts with the access of the
-- person who made it, checked every time it fires.
--
-- Webhooks: a secret URL per hook (only its SHA-256 is kept; the URL is
-- shown when made or regenerated). `mapping` maps the request's JSON body
-- onto the run's input (channel -> JSON pointer; NULL: the body is the
-- input). `signing_secret` names one of the maker's secrets: requests must
-- then carry an HMAC-SHA256 signature made with it. `respond` is `run`
-- (answer with the run at once) or `result` (wait for it).
CREATE TABLE webhooks (
    id             TEXT PRIMARY KEY NOT NULL,
    graph_id       TEXT NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    token_sha256   TEXT NOT NULL UNIQUE,
    prefix         TEXT NOT NULL,
    mapping        TEXT,
    signing_secret TEXT,
    respond        TEXT NOT NULL CHECK (respond IN ('run', 'result')),
    enabled        BOOLEAN NOT NULL DEFAULT TRUE,
    created_by     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at     TEXT NOT NULL,
    last_used_at   TEXT
);
CREATE INDEX webhooks_by_graph ON webhooks (graph_id);
-- Deliveries seen, by the sender's delivery id (or the signature): the
-- same delivery again answers with its run instead of starting another.
CREATE TABLE webhook_deliveries (
    webhook_id   TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    delivery     TEXT NOT NULL,
    run_id       TEXT NOT NULL,
    received_at  TEXT NOT NULL,
    PRIMARY KEY (webhook_id, delivery)
);
-- Schedules: a cron expression in a time zone, the input each run gets,
-- and what to do with times missed while no server ran (`skip`, or
-- `run_once`). `next_at` (UTC) is advanced with a compare-and-set, so that
-- exactly one server fires each time; `schedule_fires` holds each time
-- fired once (its key says so too).
CREATE TABLE schedules (
    id            TEXT PRIMARY KEY NOT NULL,
    graph_id      TEXT NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    cron          TEXT NOT NULL,
    timezone      TEXT NOT NULL,
    input         TEXT NOT NULL,
    missed        TEXT NOT NULL CHECK (missed IN ('skip', 'run_once')),
    enabled       BOOLEAN NOT NULL DEFAULT TRUE,
    next_at       TEXT NOT NULL,
    created_by    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at    TEXT NOT NULL
);
CREATE INDEX schedules_due ON schedules (enabled, next_at);
CREATE TABLE schedule_fires (
    schedule_id  TEXT NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
    fire_at      TEXT NOT NULL,
    run_id       TEXT,
    error        TEXT,
    fired_at     TEXT NOT NULL,
    PRIMARY KEY (schedule_id, fire_at)
);
