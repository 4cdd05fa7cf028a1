ALTER TABLE runs ADD COLUMN embeds TEXT NOT NULL DEFAULT '[]';

ALTER TABLE users ADD COLUMN username_key TEXT;
CREATE UNIQUE INDEX users_by_key ON users (username_key);
