-- Recorded replies: an experiment may keep every model and tool reply of
-- its runs (`record_replies`, 0 or 1), and a later one of the same graph
-- may be given them back (`replay_from`; not a foreign key: deleting the
-- source keeps its replays' results, and a replay whose source is gone
-- finds nothing and asks the models).
ALTER TABLE experiments ADD COLUMN record_replies BIGINT NOT NULL DEFAULT 0;
ALTER TABLE experiments ADD COLUMN replay_from TEXT;
-- One run's replies, as the engine's recording writes them (JSON lines),
-- by the example and repetition it ran: a replay gives each of its items
-- the replies of the same item of its source. `replayed` and `live` count
-- the calls answered from a recording and by the model or tool itself.
CREATE TABLE experiment_replies (
    experiment_id   TEXT NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
    example_id      TEXT NOT NULL,
    repetition      BIGINT NOT NULL,
    lines           TEXT NOT NULL,
    replayed        BIGINT NOT NULL,
    live            BIGINT NOT NULL,
    PRIMARY KEY (experiment_id, example_id, repetition)
);
