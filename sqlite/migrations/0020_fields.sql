-- Fielded search (searchfields.go in the root package): a record's
-- creators, subjects and date tokens beside its title and body, each a
-- column of the index that a field term names (creator : "melville"), and
-- the span of its years and its title's sort key, which the date and
-- title sorts read (searchsort.go). A page has none of
-- them. The body still holds every literal but the titles, so that a word
-- without a field finds the same documents as before.
ALTER TABLE search_text ADD COLUMN creator TEXT NOT NULL DEFAULT '';
ALTER TABLE search_text ADD COLUMN subject TEXT NOT NULL DEFAULT '';
ALTER TABLE search_text ADD COLUMN dates TEXT NOT NULL DEFAULT '';
ALTER TABLE search_docs ADD COLUMN date_lo INTEGER; -- NULL when undated
ALTER TABLE search_docs ADD COLUMN date_hi INTEGER;
-- the title's sort key (SearchTitleKey), NULL for a page or an untitled record
ALTER TABLE search_docs ADD COLUMN title_key INTEGER;

DROP TRIGGER search_text_insert;
DROP TRIGGER search_text_delete;
DROP TRIGGER search_text_update;
DROP TABLE search_fts;
CREATE VIRTUAL TABLE search_fts USING fts5 (
    title, body, creator, subject, dates,
    content = 'search_text', content_rowid = 'key',
    tokenize = 'shelfmark'
);
CREATE TRIGGER search_text_insert AFTER INSERT ON search_text BEGIN
    INSERT INTO search_fts (rowid, title, body, creator, subject, dates)
        VALUES (new.key, new.title, new.body, new.creator, new.subject, new.dates);
END;
CREATE TRIGGER search_text_delete AFTER DELETE ON search_text BEGIN
    INSERT INTO search_fts (search_fts, rowid, title, body, creator, subject, dates)
        VALUES ('delete', old.key, old.title, old.body, old.creator, old.subject, old.dates);
END;
CREATE TRIGGER search_text_update AFTER UPDATE OF title, body, creator, subject, dates ON search_text BEGIN
    INSERT INTO search_fts (search_fts, rowid, title, body, creator, subject, dates)
        VALUES ('delete', old.key, old.title, old.body, old.creator, old.subject, old.dates);
    INSERT INTO search_fts (rowid, title, body, creator, subject, dates)
        VALUES (new.key, new.title, new.body, new.creator, new.subject, new.dates);
END;
INSERT INTO search_fts (search_fts) VALUES ('rebuild');

-- The records' new columns are filled by the search indexer, which reads
-- every work and collection again from the beginning of the change
-- sequence, in its batches, while the server runs.
UPDATE counters SET value = 0 WHERE name = 'search_checkpoint';
