-- Search facets on metadata (searchfacets.go in the root package): the
-- values of each work's and collection's record for the repository's
-- metadata facets (creator, subject, language, type and those an
-- administrator names), written by the search indexer with the record's
-- document. A search counts the values of the works of its sample, one
-- look-up of the primary key a work; a filter by a value is a hidden
-- token in the full-text index, not a read of this table.
CREATE TABLE search_facets (
    work  BIGINT NOT NULL, -- the record's key (search_docs.work)
    facet TEXT NOT NULL,   -- SearchFacet.Name
    value TEXT NOT NULL,   -- FacetValue: trimmed, at most 200 bytes
    PRIMARY KEY (work, facet, value)
);

-- The records are given their values (and their hidden tokens) by the
-- search indexer, which, finding no fingerprint of the facets it indexed
-- with (the counter search_facets_config), reads every work and
-- collection again from the beginning of the change sequence, in its
-- batches, while the server runs.
