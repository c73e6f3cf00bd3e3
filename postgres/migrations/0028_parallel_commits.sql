-- Parallel commits (see the package documentation, "Parallel commits and
-- the change horizon"). Change sequence numbers are no longer taken from
-- the counters row 'seq', whose row lock made every write transaction wait
-- from its first number to the commit of the one before it. They come
-- from the sequence change_seq, under a lock held only while a
-- transaction takes its numbers. The row 'seq' is removed, so that a
-- server of an earlier version, which would still take numbers from it,
-- fails its writes instead of handing out numbers twice.
--
-- A transaction that takes numbers marks the first of them with a
-- transaction-scoped advisory lock (a claim), before the sequence moves
-- past them. Readers of the change feed read only up to seq_horizon: the
-- highest number below every claim still held, kept in counters by
-- shelfmark_advance_horizon after each commit that took numbers.
CREATE SEQUENCE change_seq AS bigint MINVALUE 0 NO CYCLE;
SELECT setval('change_seq', (SELECT value FROM counters WHERE name = 'seq'), true);
INSERT INTO counters (name, value) SELECT 'seq_horizon', value FROM counters WHERE name = 'seq';
DELETE FROM counters WHERE name = 'seq';

-- shelfmark_claim_seq takes n consecutive numbers and returns the first.
-- The allocation lock (session-scoped, so held only for this call) makes
-- the read and the move of change_seq one step among writers; the claim
-- (transaction-scoped, shared, so two claims never wait for each other)
-- is taken before the sequence moves, so a horizon that reads change_seq
-- and then pg_locks sees the claim of every number it counts, or that
-- number's transaction has ended. The claim's second key holds the low 32
-- bits of the number; shelfmark_seq_horizon restores the rest from
-- change_seq (claims still held are never 2^32 numbers old).
CREATE FUNCTION shelfmark_claim_seq(n bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    alloc  int4 := hashtext('shelfmark change allocation ' || current_schema());
    claims int4 := hashtext('shelfmark change claims ' || current_schema());
    last   bigint;
    low    bigint;
BEGIN
    IF n < 1 THEN
        RAISE EXCEPTION 'claim % change sequence numbers: at least 1', n;
    END IF;
    PERFORM pg_advisory_lock(alloc, 0);
    BEGIN
        SELECT last_value INTO last FROM change_seq;
        low := (last + 1) & 4294967295;
        PERFORM pg_advisory_xact_lock_shared(claims,
            (CASE WHEN low >= 2147483648 THEN low - 4294967296 ELSE low END)::int4);
        PERFORM setval('change_seq', last + n, true);
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        PERFORM pg_advisory_unlock(alloc, 0);
        RAISE;
    END;
    PERFORM pg_advisory_unlock(alloc, 0);
    RETURN last + 1;
END $$;

-- shelfmark_seq_horizon is the highest number at or below which every
-- number taken belongs to a transaction that has ended: the last number
-- taken, or one less than the oldest claim still held. change_seq is read
-- first, pg_locks after (see shelfmark_claim_seq).
CREATE FUNCTION shelfmark_seq_horizon() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    claims bigint := hashtext('shelfmark change claims ' || current_schema())::bigint & 4294967295;
    last   bigint;
    oldest bigint;
BEGIN
    SELECT last_value INTO last FROM change_seq;
    SELECT min(last - ((last - l.objid::bigint) % 4294967296 + 4294967296) % 4294967296) INTO oldest
    FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.objsubid = 2 AND l.classid = claims::oid
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database());
    RETURN least(last, coalesce(oldest - 1, last));
END $$;

-- shelfmark_advance_horizon raises seq_horizon to shelfmark_seq_horizon()
-- and returns it, or NULL when it held as much already (then it writes
-- nothing). A reader whose snapshot sees the new value sees every change
-- at or below it: their transactions ended before the value was computed.
CREATE FUNCTION shelfmark_advance_horizon() RETURNS bigint LANGUAGE sql AS $$
    UPDATE counters SET value = h.v FROM (SELECT shelfmark_seq_horizon() AS v) h
    WHERE name = 'seq_horizon' AND value < h.v
    RETURNING value
$$;
