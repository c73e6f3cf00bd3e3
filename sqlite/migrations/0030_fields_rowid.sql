-- fields becomes a rowid table with a unique index on (resource,
-- predicate), instead of a WITHOUT ROWID table keyed by them. A WITHOUT
-- ROWID table is a B-tree of keys, and SQLite keeps at most about a
-- quarter of a page of such an entry in the page (1,002 bytes of a
-- 4,096-byte page): a longer field (a list of references, an abstract)
-- put the rest in an overflow page of its own, mostly empty. A rowid
-- table keeps up to 4,061 bytes of a row in the page. A new resource's
-- rows get consecutive rowids, so its metadata stays together.
CREATE TABLE fields_rowid (
    resource  INTEGER NOT NULL,
    predicate TEXT    NOT NULL,
    objects   BLOB    NOT NULL
);
INSERT INTO fields_rowid (resource, predicate, objects)
    SELECT resource, predicate, objects FROM fields ORDER BY resource, predicate;
DROP TABLE fields;
ALTER TABLE fields_rowid RENAME TO fields;
CREATE UNIQUE INDEX fields_key ON fields (resource, predicate);
