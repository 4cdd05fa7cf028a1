-- Each run's events are numbered from 0 without gaps. The primary key
-- (run_id, first_seq) refuses a batch stored twice; this trigger refuses a
-- batch that does not begin right after the run's stored log (a gap, or an
-- overlap with what is stored), or that ends before it begins, whoever
-- writes it: a save through `heddle_saves` or events written ahead. The
-- whole statement is undone, so a refused save stores no checkpoint either.
-- SQLite serialises writers, so of two writers of the same events the
-- second always sees the first's and is refused.
CREATE TRIGGER heddle_events_follow BEFORE INSERT ON heddle_events
WHEN NEW.last_seq < NEW.first_seq
  OR NEW.first_seq IS NOT COALESCE(
       (SELECT last_seq + 1 FROM heddle_events WHERE run_id = NEW.run_id
        ORDER BY first_seq DESC LIMIT 1),
       0)
BEGIN
    SELECT RAISE(ABORT, 'the events do not follow the run''s stored events');
END;
