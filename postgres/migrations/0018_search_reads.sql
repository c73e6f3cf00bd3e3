-- The owner and role test of a signed-in caller's search (sqlstore.Readable,
-- shelfmark.SearchReader) as a function: whether the user p_reader may read
-- the work (or collection) p_work through its chain of parents (the root's
-- depositor) or through the collections it and they belong to, and the
-- collections above those (one of colls). A search statement that calls it
-- is planned in a fraction of the time one that holds the recursive test
-- inline takes (PL/pgSQL plans the test once per session); SQLite, which
-- plans in microseconds, keeps it inline.
CREATE FUNCTION shelfmark_search_reads(p_work bigint, p_reader bigint, p_colls bigint[]) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN EXISTS (
        WITH RECURSIVE up(k, p, kind, n) AS (
            SELECT r.key, r.parent, r.kind, 0 FROM resources r WHERE r.key = p_work
            UNION ALL
            SELECT ru.key, ru.parent, ru.kind, up.n + 1 FROM resources ru JOIN up ON ru.key = up.p WHERE up.n < 64),
        gov(c) AS (
            SELECT up.k FROM up WHERE up.kind = 'collection'
            UNION SELECT mg.collection FROM memberships mg JOIN up ON mg.member = up.k JOIN resources rg ON rg.key = mg.collection WHERE rg.deleted IS NULL
            UNION SELECT mg.collection FROM memberships mg JOIN gov ON mg.member = gov.c JOIN resources rg ON rg.key = mg.collection WHERE rg.deleted IS NULL)
        SELECT 1 FROM up JOIN owners o ON o.resource = up.k WHERE up.p IS NULL AND o.user_key = p_reader
        UNION ALL
        SELECT 1 FROM gov WHERE cardinality(p_colls) > 0 AND gov.c = ANY (p_colls));
END
$$;
