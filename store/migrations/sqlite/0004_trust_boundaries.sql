-- Trust boundaries.
--
-- The saved graphs a run embeds (a JSON array of graph ids): the starter's
-- access to each is checked again when a queued, resumed or recovered run
-- goes on.
ALTER TABLE runs ADD COLUMN embeds TEXT NOT NULL DEFAULT '[]';

-- A username in the form it is unique in: NFKC-normalised and case-folded,
-- so look-alikes (`Kim` and `\u212Aim`, the Kelvin sign) are one name.
-- Filled for older accounts at start; NULLs do not collide.
ALTER TABLE users ADD COLUMN username_key TEXT;
CREATE UNIQUE INDEX users_by_key ON users (username_key);
