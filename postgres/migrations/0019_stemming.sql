-- Stemming (searchstem.go in the root package): the configuration
-- shelfmark reads words as 'simple' does (lower case, no stop words: a
-- phrase of short words still matches) and folds them to their Porter
-- stems with Snowball's porter dictionary, the algorithm of SQLite's FTS5
-- porter tokenizer, so that harbours finds harbour. Numbers, e-mail
-- addresses and the like stay as 'simple' reads them. The tsvector of
-- 0005_search.sql is made again in it (the column is rewritten, and its
-- index with it), and queries and headlines use it (postgres/search.go).
CREATE TEXT SEARCH DICTIONARY shelfmark_porter (TEMPLATE = snowball, Language = porter);
CREATE TEXT SEARCH CONFIGURATION shelfmark (COPY = simple);
ALTER TEXT SEARCH CONFIGURATION shelfmark
    ALTER MAPPING FOR asciiword, word, numword, asciihword, hword, numhword, hword_asciipart, hword_part, hword_numpart
    WITH shelfmark_porter;
ALTER TABLE search_docs DROP COLUMN tsv;
ALTER TABLE search_docs ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('shelfmark'::regconfig, title), 'A') ||
    setweight(to_tsvector('shelfmark'::regconfig, body), 'B')) STORED;
ALTER TABLE search_docs ALTER COLUMN tsv SET STORAGE MAIN;
CREATE INDEX search_docs_tsv ON search_docs USING gin (tsv);
