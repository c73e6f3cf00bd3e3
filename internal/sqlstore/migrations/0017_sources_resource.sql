-- The source keys of a resource: the preservation copy records them in
-- the resource's object, so its build reads them by resource.
CREATE INDEX sources_resource ON sources (resource, source_key);
