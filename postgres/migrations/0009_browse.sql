-- Browsing a collection (a search without words, SearchQuery.Browse)
-- reads the documents of each member in key order, and with a kind filter
-- those of one kind in key order: two indexes that end in the key (the
-- first replaces search_docs_work, which DeleteSearchDocs used by work).
CREATE INDEX search_docs_work_key ON search_docs (work, key);
CREATE INDEX search_docs_work_kind ON search_docs (work, kind, key);
DROP INDEX search_docs_work;
