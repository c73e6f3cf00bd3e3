-- Stemming per language (searchstem.go in the root package): each
-- document is stemmed in its work's language (search_docs.lang, the
-- Snowball name of one of shelfmark.SearchLanguages, or '' for English
-- and every language without a stemmer, stemmed in the configuration
-- shelfmark as before). A configuration per language reads words as
-- shelfmark does (the parser default, no stop words: a phrase of short
-- words still matches; no unaccent: diacritics stay) and folds them with
-- Snowball's dictionary of the language; the tsvector is made in the
-- document's (shelfmark_config), and a query is made in every
-- configuration, joined by | (postgres/search.go).
CREATE TEXT SEARCH DICTIONARY shelfmark_french (TEMPLATE = snowball, Language = french);
CREATE TEXT SEARCH DICTIONARY shelfmark_german (TEMPLATE = snowball, Language = german);
CREATE TEXT SEARCH DICTIONARY shelfmark_spanish (TEMPLATE = snowball, Language = spanish);
CREATE TEXT SEARCH DICTIONARY shelfmark_italian (TEMPLATE = snowball, Language = italian);
CREATE TEXT SEARCH DICTIONARY shelfmark_dutch (TEMPLATE = snowball, Language = dutch);
CREATE TEXT SEARCH DICTIONARY shelfmark_portuguese (TEMPLATE = snowball, Language = portuguese);
CREATE TEXT SEARCH DICTIONARY shelfmark_swedish (TEMPLATE = snowball, Language = swedish);
CREATE TEXT SEARCH CONFIGURATION shelfmark_french (COPY = shelfmark);
CREATE TEXT SEARCH CONFIGURATION shelfmark_german (COPY = shelfmark);
CREATE TEXT SEARCH CONFIGURATION shelfmark_spanish (COPY = shelfmark);
CREATE TEXT SEARCH CONFIGURATION shelfmark_italian (COPY = shelfmark);
CREATE TEXT SEARCH CONFIGURATION shelfmark_dutch (COPY = shelfmark);
CREATE TEXT SEARCH CONFIGURATION shelfmark_portuguese (COPY = shelfmark);
CREATE TEXT SEARCH CONFIGURATION shelfmark_swedish (COPY = shelfmark);
ALTER TEXT SEARCH CONFIGURATION shelfmark_french
    ALTER MAPPING FOR asciiword, word, numword, asciihword, hword, numhword, hword_asciipart, hword_part, hword_numpart WITH shelfmark_french;
ALTER TEXT SEARCH CONFIGURATION shelfmark_german
    ALTER MAPPING FOR asciiword, word, numword, asciihword, hword, numhword, hword_asciipart, hword_part, hword_numpart WITH shelfmark_german;
ALTER TEXT SEARCH CONFIGURATION shelfmark_spanish
    ALTER MAPPING FOR asciiword, word, numword, asciihword, hword, numhword, hword_asciipart, hword_part, hword_numpart WITH shelfmark_spanish;
ALTER TEXT SEARCH CONFIGURATION shelfmark_italian
    ALTER MAPPING FOR asciiword, word, numword, asciihword, hword, numhword, hword_asciipart, hword_part, hword_numpart WITH shelfmark_italian;
ALTER TEXT SEARCH CONFIGURATION shelfmark_dutch
    ALTER MAPPING FOR asciiword, word, numword, asciihword, hword, numhword, hword_asciipart, hword_part, hword_numpart WITH shelfmark_dutch;
ALTER TEXT SEARCH CONFIGURATION shelfmark_portuguese
    ALTER MAPPING FOR asciiword, word, numword, asciihword, hword, numhword, hword_asciipart, hword_part, hword_numpart WITH shelfmark_portuguese;
ALTER TEXT SEARCH CONFIGURATION shelfmark_swedish
    ALTER MAPPING FOR asciiword, word, numword, asciihword, hword, numhword, hword_asciipart, hword_part, hword_numpart WITH shelfmark_swedish;

-- the configuration of a document's language ('' and any other value:
-- shelfmark, English)
CREATE FUNCTION shelfmark_config(lang text) RETURNS regconfig
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN CASE lang
        WHEN 'french' THEN 'shelfmark_french'::regconfig
        WHEN 'german' THEN 'shelfmark_german'::regconfig
        WHEN 'spanish' THEN 'shelfmark_spanish'::regconfig
        WHEN 'italian' THEN 'shelfmark_italian'::regconfig
        WHEN 'dutch' THEN 'shelfmark_dutch'::regconfig
        WHEN 'portuguese' THEN 'shelfmark_portuguese'::regconfig
        WHEN 'swedish' THEN 'shelfmark_swedish'::regconfig
        ELSE 'shelfmark'::regconfig END;

-- The vector of 0020_fields.sql, made in the document's configuration
-- (the hidden tokens of dates and facet values stay in shelfmark). The
-- column is rewritten, and its index with it; every document is still
-- in English.
ALTER TABLE search_docs ADD COLUMN lang text NOT NULL DEFAULT '';
ALTER TABLE search_docs DROP COLUMN tsv;
ALTER TABLE search_docs ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector(shelfmark_config(lang), title), 'A') ||
    setweight(to_tsvector(shelfmark_config(lang), body), 'B') ||
    setweight(to_tsvector(shelfmark_config(lang), creator), 'C') ||
    setweight(to_tsvector(shelfmark_config(lang), subject), 'D') ||
    setweight(to_tsvector('shelfmark'::regconfig, dates), 'D')) STORED;
ALTER TABLE search_docs ALTER COLUMN tsv SET STORAGE MAIN;
CREATE INDEX search_docs_tsv ON search_docs USING gin (tsv);

-- The records learn their language from the search indexer, which reads
-- every work and collection again from the beginning of the change
-- sequence, in its batches, while the server runs; writing a record
-- whose language is not English gives its pages that language too, and
-- makes their vectors again. Until then every document stays stemmed in
-- English, and found as before.
UPDATE counters SET value = 0 WHERE name = 'search_checkpoint';
