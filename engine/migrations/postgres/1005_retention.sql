-- Retention (run::prune): what a prune must keep besides a thread's
-- newest checkpoints, pauses, fork points and each run's last checkpoint:
-- checkpoints that other features name (an evaluation's, a published
-- example's), each pinned by what names it (`kind`, `id`).
CREATE TABLE heddle_pins (
    kind          TEXT   NOT NULL,
    id            TEXT   NOT NULL,
    thread_id     TEXT   NOT NULL,
    checkpoint_id TEXT   NOT NULL,
    created_at_us BIGINT NOT NULL,
    PRIMARY KEY (kind, id, thread_id, checkpoint_id)
);
CREATE INDEX heddle_pins_by_thread ON heddle_pins (thread_id);
