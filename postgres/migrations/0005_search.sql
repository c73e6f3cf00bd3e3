-- Full-text search (issue 5; see search.go), PostgreSQL dialect: the same
-- documents as sqlite/migrations/0005_search.sql, one per live work and
-- collection (its metadata) and one per page of extracted or OCR text.
-- Visibility is not copied here: a query joins each document's work to
-- its resources row.
--
-- The index is a stored generated tsvector in the 'simple' configuration
-- (lower-cased words, no stemming, no stop words: no language is assumed),
-- title weighted A and body B for ts_rank_cd, under a GIN index.
CREATE TABLE search_docs (
    key    bigint PRIMARY KEY,        -- the resource the document describes
    work   bigint NOT NULL,           -- the work (or collection) whose visibility applies
    kind   text   NOT NULL,           -- collection | work | fileset
    format text   NOT NULL,           -- format name of a page's file; '' for metadata
    title  text   NOT NULL,
    body   text   NOT NULL,
    tsv    tsvector GENERATED ALWAYS AS (
               setweight(to_tsvector('simple'::regconfig, title), 'A') ||
               setweight(to_tsvector('simple'::regconfig, body), 'B')) STORED
);
CREATE INDEX search_docs_tsv ON search_docs USING gin (tsv);
-- the documents of a work (DeleteSearchDocs by work)
CREATE INDEX search_docs_work ON search_docs (work);
