-- Browsing a collection (a search without words, SearchQuery.Browse)
-- reads the documents of each member in key order: search_docs_work does
-- (its entries end in the key), and this index does for one kind of
-- document, so that a kind filter seeks to a member's documents of that
-- kind instead of reading all of them.
CREATE INDEX search_docs_work_kind ON search_docs (work, kind);
