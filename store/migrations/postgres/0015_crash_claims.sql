-- Where the run stood (`step N` of its newest checkpoint) when a server
-- last took it over from a server that died holding it (its lease lapsed,
-- or it restarted without releasing it). Taken over from a dead server
-- again at that very step, the run made no progress in between: it is
-- what kills its servers, and it is failed (quarantined), not retried.
ALTER TABLE runs ADD COLUMN crash_checkpoint TEXT;
