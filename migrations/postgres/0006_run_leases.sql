-- Runs are leased, not owned: the server executing (or queueing) a run
-- holds a lease it renews; when the lease lapses (its server died) another
-- server takes the run over from its newest checkpoint. `request` keeps
-- what the run was asked to do (start with breakpoints, fork from a
-- checkpoint with edits, resume with an answer), written with the record,
-- so whichever server takes a queued run does exactly that.
ALTER TABLE runs ADD COLUMN lease_owner TEXT;
ALTER TABLE runs ADD COLUMN lease_expires_at TEXT;
ALTER TABLE runs ADD COLUMN request TEXT;
CREATE INDEX runs_by_lease ON runs (status, lease_expires_at);
