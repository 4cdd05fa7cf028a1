-- A fork's origin: the run it went on from and the step it went on at, so
-- lists and the run's own view can say "fork of … at step N".
ALTER TABLE runs ADD COLUMN forked_from TEXT;
ALTER TABLE runs ADD COLUMN forked_at_step INTEGER;
