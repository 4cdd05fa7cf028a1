-- How long, in milliseconds, the run has been active (executing on a
-- server) over all its executions: pauses and time queued do not count.
-- A server's ceiling on active time (`--max-run-active-secs`) is checked
-- against it when the run goes on after a pause or a hand-over.
ALTER TABLE runs ADD COLUMN active_ms INTEGER NOT NULL DEFAULT 0;
