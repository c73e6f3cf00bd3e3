-- The grants that a decision on a request for access gave end (expires);
-- the access sweep deletes them some time after, and finds them through
-- this index without reading the roles on collections, which never end.
CREATE INDEX grants_expires ON grants (expires) WHERE expires IS NOT NULL;
