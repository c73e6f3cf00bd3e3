-- Full-text search (see search.go): one document per live work
-- and collection (its metadata) and one per page of extracted or OCR text,
-- in search_docs and search_text, indexed by the FTS5 table search_fts
-- over title and body. Visibility is not copied here: a query joins each
-- document's work to its resources row.

-- FTS5 is compiled into mattn/go-sqlite3 only with the sqlite_fts5 build
-- tag. Without it, CREATE VIRTUAL TABLE would fail with "no such module:
-- fts5"; this check fails first, with a message that says what to do (the
-- name of the CHECK constraint is the message SQLite reports).
CREATE TEMP TABLE fts5_check (
    ok INTEGER CONSTRAINT "this SQLite lacks FTS5: build shelfmark with -tags sqlite_fts5" CHECK (ok)
);
INSERT INTO fts5_check (ok)
    SELECT count(*) > 0 FROM pragma_compile_options WHERE compile_options = 'ENABLE_FTS5';
DROP TABLE fts5_check;

-- The documents, by key (the rowid, so search_fts refers to it directly),
-- in two tables: search_docs holds the narrow columns every match of a
-- query reads (its work, for the visibility join, kind and format, for
-- filters and facets), search_text the text, which only the index and the
-- snippets of a page of hits read. Apart, a query that matches 100,000
-- pages reads 2 MB of search_docs instead of every page of text: twice as
-- fast (measured: 117 ms instead of 237 ms for a ranked top 20).
CREATE TABLE search_docs (
    key    INTEGER PRIMARY KEY,       -- the resource the document describes
    work   INTEGER NOT NULL,          -- the work (or collection) whose visibility applies
    kind   TEXT    NOT NULL,          -- collection | work | fileset
    format TEXT    NOT NULL           -- format name of a page's file; '' for metadata
);
-- the documents of a work (DeleteSearchDocs by work)
CREATE INDEX search_docs_work ON search_docs (work);

CREATE TABLE search_text (
    key   INTEGER PRIMARY KEY,        -- search_docs.key
    title TEXT    NOT NULL,
    body  TEXT    NOT NULL
);
-- a document's text goes with it
CREATE TRIGGER search_docs_delete AFTER DELETE ON search_docs BEGIN
    DELETE FROM search_text WHERE key = old.key;
END;

-- The index: external content (the text lives once, in search_text, and
-- snippet() reads it from there), case and diacritics folded, no stemming
-- (no language is assumed). bm25() weighs title above body.
CREATE VIRTUAL TABLE search_fts USING fts5 (
    title, body,
    content = 'search_text', content_rowid = 'key',
    tokenize = 'unicode61 remove_diacritics 2'
);

-- Kept in sync by triggers: an external-content index is told the old
-- text of a row it removes. An upsert that changes nothing fires none.
CREATE TRIGGER search_text_insert AFTER INSERT ON search_text BEGIN
    INSERT INTO search_fts (rowid, title, body) VALUES (new.key, new.title, new.body);
END;
CREATE TRIGGER search_text_delete AFTER DELETE ON search_text BEGIN
    INSERT INTO search_fts (search_fts, rowid, title, body) VALUES ('delete', old.key, old.title, old.body);
END;
CREATE TRIGGER search_text_update AFTER UPDATE OF title, body ON search_text BEGIN
    INSERT INTO search_fts (search_fts, rowid, title, body) VALUES ('delete', old.key, old.title, old.body);
    INSERT INTO search_fts (rowid, title, body) VALUES (new.key, new.title, new.body);
END;
