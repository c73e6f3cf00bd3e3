-- Fielded search (searchfields.go in the root package): a record's
-- creators, subjects and date tokens beside its title and body, in the
-- tsvector with weights of their own (title A, body B, creators C,
-- subjects and date tokens D) that a field term names ('melville':C), and
-- the span of its years and its title's sort key, which the date and
-- title sorts read (searchsort.go). A page has none of
-- them. The body still holds every literal but the titles, so that a word
-- without a field finds the same documents as before.
ALTER TABLE search_docs ADD COLUMN creator text NOT NULL DEFAULT '';
ALTER TABLE search_docs ADD COLUMN subject text NOT NULL DEFAULT '';
ALTER TABLE search_docs ADD COLUMN dates text NOT NULL DEFAULT '';
ALTER TABLE search_docs ADD COLUMN date_lo bigint; -- NULL when undated
ALTER TABLE search_docs ADD COLUMN date_hi bigint;
-- the title's sort key (SearchTitleKey), NULL for a page or an untitled record
ALTER TABLE search_docs ADD COLUMN title_key bigint;
ALTER TABLE search_docs DROP COLUMN tsv;
ALTER TABLE search_docs ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('shelfmark'::regconfig, title), 'A') ||
    setweight(to_tsvector('shelfmark'::regconfig, body), 'B') ||
    setweight(to_tsvector('shelfmark'::regconfig, creator), 'C') ||
    setweight(to_tsvector('shelfmark'::regconfig, subject || ' ' || dates), 'D')) STORED;
ALTER TABLE search_docs ALTER COLUMN tsv SET STORAGE MAIN;
CREATE INDEX search_docs_tsv ON search_docs USING gin (tsv);

-- The records' new columns are filled by the search indexer, which reads
-- every work and collection again from the beginning of the change
-- sequence, in its batches, while the server runs.
UPDATE counters SET value = 0 WHERE name = 'search_checkpoint';
