-- Runs are leased, not owned: the server executing (or queueing) a run
-- holds a lease it renews; when the lease lapses (its server died) another
-- server takes the run over from its newest checkpoint. `request` keeps
-- what the run was asked to do (start with breakpoints, fork from a
-- checkpoint with edits, resume with an answer), written with the record,
-- so whichever server takes a queued run does exactly that.
-- `cancel_requested` is a cancel asked through another server than the
-- one executing the run: the executing server acts on it.
ALTER TABLE runs ADD COLUMN lease_owner TEXT;
ALTER TABLE runs ADD COLUMN lease_expires_at TEXT;
ALTER TABLE runs ADD COLUMN request TEXT;
ALTER TABLE runs ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0;
CREATE INDEX runs_by_lease ON runs (status, lease_expires_at);
