-- What a run's model calls used: tokens (cached ones are part of the
-- prompt's) and cost in billionths of a US dollar, so lists, threads and
-- a graph's usage over time add up in SQL.
ALTER TABLE runs ADD COLUMN model_calls BIGINT NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN prompt_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN completion_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN cached_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN cost_nanos BIGINT NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN unpriced_calls BIGINT NOT NULL DEFAULT 0;
