-- Stemming (searchstem.go in the root package): the index of
-- 0005_search.sql again, its words folded to their Porter stems (FTS5's
-- porter tokenizer over unicode61, which still folds case and
-- diacritics), so that harbours finds harbour. The index is rebuilt from
-- search_text, whose text does not change; the triggers that keep it in
-- sync name it and go on working.
DROP TABLE search_fts;
CREATE VIRTUAL TABLE search_fts USING fts5 (
    title, body,
    content = 'search_text', content_rowid = 'key',
    tokenize = 'shelfmark'
);
INSERT INTO search_fts (search_fts) VALUES ('rebuild');
