-- Limits that hold across every server on the database: log-in attempts
-- per client address and per account are counted here, not in one
-- process's memory, so a load balancer spreading an attacker's guesses
-- over N servers does not give them N times the budget. One row per key
-- holds its GCRA "theoretical arrival time" in Unix milliseconds; a row
-- whose time has passed is fully recovered and may be deleted.
CREATE TABLE rate_limits (
    key TEXT PRIMARY KEY,
    tat BIGINT NOT NULL
);
