-- What each save changed, in words ("added node `tools`, edited the
-- system prompt of `agent`"), written by the server when it saves; and a
-- name a person may give a version ("before the billing rework").
ALTER TABLE graph_versions ADD COLUMN summary TEXT NOT NULL DEFAULT '';
ALTER TABLE graph_versions ADD COLUMN label TEXT;
