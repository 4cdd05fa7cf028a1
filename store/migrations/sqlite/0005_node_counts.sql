-- How many nodes each graph and version has, kept on save: the graph list
-- and the version history show it without reading (or parsing) documents,
-- in the same way on SQLite and PostgreSQL.
ALTER TABLE graphs ADD COLUMN node_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE graph_versions ADD COLUMN node_count INTEGER NOT NULL DEFAULT 0;
UPDATE graphs SET node_count = COALESCE(json_array_length(graph_json, '$.nodes'), 0);
UPDATE graph_versions SET node_count = COALESCE(json_array_length(graph_json, '$.nodes'), 0);
