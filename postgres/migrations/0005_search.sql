-- Full-text search (see search.go), PostgreSQL dialect: the same
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
-- Ranking reads the tsvector of every match (ts_rank_cd; a phrase's
-- recheck too): kept compressed in the row (MAIN) rather than in the TOAST
-- table (the default for values over 2 kB, such as a page's vector),
-- where each read is one more index look-up. Measured at 100,000 pages:
-- a word in 5,500 of them ranks in 15 ms instead of 37, one in all of
-- them in 245 ms instead of 894. The body goes out of line instead.
ALTER TABLE search_docs ALTER COLUMN tsv SET STORAGE MAIN;
CREATE INDEX search_docs_tsv ON search_docs USING gin (tsv);
-- the documents of a work (DeleteSearchDocs by work)
CREATE INDEX search_docs_work ON search_docs (work);
