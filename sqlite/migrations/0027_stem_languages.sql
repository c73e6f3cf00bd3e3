-- Stemming per language (searchstem.go in the root package): each
-- document is stemmed in its work's language (search_text.lang, the
-- Snowball name of one of shelfmark.SearchLanguages, or '' for English
-- and every language without a stemmer, stemmed with Porter's algorithm
-- as before). The index gets the language as the FTS5 locale of its
-- title, body, creators and subjects (locale=1; the hidden tokens of
-- dates and facet values have none), which the tokenizer shelfmark
-- (sqlite/stem.c) reads to pick its stemmer. Its external content is the
-- view search_text_fts, search_text with those columns wrapped in
-- fts5_locale(lang, …) (a value with an empty locale is the text
-- itself); the triggers give the index the same values.
ALTER TABLE search_text ADD COLUMN lang TEXT NOT NULL DEFAULT '';

DROP TRIGGER search_text_insert;
DROP TRIGGER search_text_delete;
DROP TRIGGER search_text_update;
DROP TABLE search_fts;
CREATE VIEW search_text_fts AS SELECT key,
    fts5_locale(lang, title) AS title, fts5_locale(lang, body) AS body,
    fts5_locale(lang, creator) AS creator, fts5_locale(lang, subject) AS subject, dates
    FROM search_text;
CREATE VIRTUAL TABLE search_fts USING fts5 (
    title, body, creator, subject, dates,
    content = 'search_text_fts', content_rowid = 'key',
    tokenize = 'shelfmark', locale = 1
);
CREATE TRIGGER search_text_insert AFTER INSERT ON search_text BEGIN
    INSERT INTO search_fts (rowid, title, body, creator, subject, dates)
        VALUES (new.key, fts5_locale(new.lang, new.title), fts5_locale(new.lang, new.body),
            fts5_locale(new.lang, new.creator), fts5_locale(new.lang, new.subject), new.dates);
END;
CREATE TRIGGER search_text_delete AFTER DELETE ON search_text BEGIN
    INSERT INTO search_fts (search_fts, rowid, title, body, creator, subject, dates)
        VALUES ('delete', old.key, fts5_locale(old.lang, old.title), fts5_locale(old.lang, old.body),
            fts5_locale(old.lang, old.creator), fts5_locale(old.lang, old.subject), old.dates);
END;
CREATE TRIGGER search_text_update AFTER UPDATE OF title, body, creator, subject, dates, lang ON search_text BEGIN
    INSERT INTO search_fts (search_fts, rowid, title, body, creator, subject, dates)
        VALUES ('delete', old.key, fts5_locale(old.lang, old.title), fts5_locale(old.lang, old.body),
            fts5_locale(old.lang, old.creator), fts5_locale(old.lang, old.subject), old.dates);
    INSERT INTO search_fts (rowid, title, body, creator, subject, dates)
        VALUES (new.key, fts5_locale(new.lang, new.title), fts5_locale(new.lang, new.body),
            fts5_locale(new.lang, new.creator), fts5_locale(new.lang, new.subject), new.dates);
END;
-- Every document is indexed again, still in English: no language is
-- known yet.
INSERT INTO search_fts (search_fts) VALUES ('rebuild');

-- The records learn their language from the search indexer, which reads
-- every work and collection again from the beginning of the change
-- sequence, in its batches, while the server runs; writing a record
-- whose language is not English gives its pages that language too, and
-- indexes them again. Until then every document stays stemmed in
-- English, and found as before.
UPDATE counters SET value = 0 WHERE name = 'search_checkpoint';
