-- The resources without a parent (collections and works, not their file
-- sets, files or child works), by kind and key: the web interface's lists
-- of collections and of recent works read one range of it, newest first.
CREATE INDEX resources_roots ON resources (kind, key) WHERE parent IS NULL AND deleted IS NULL;
