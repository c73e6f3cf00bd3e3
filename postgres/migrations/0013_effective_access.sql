-- Effective access (effective.go in the root package): the same columns,
-- values and indexes as sqlite/migrations/0013_effective_access.sql. Who
-- may see a resource once everything that holds it (its parent chain)
-- and, for a derivative, the file it was made from are taken into
-- account, stored on its row so that the access policy and every index
-- (search, the OAI-PMH view, the sitemap) decide from one value read with
-- the row. Times are Unix microseconds (UTC).

ALTER TABLE resources ADD COLUMN source bigint;      -- a derivative's source file, or NULL
-- the default hides: a row nobody computed an effective access for is
-- never shown by mistake
ALTER TABLE resources ADD COLUMN eff_visibility text NOT NULL DEFAULT 'private';
ALTER TABLE resources ADD COLUMN eff_embargo bigint;  -- the latest embargo of the chain, or NULL
ALTER TABLE resources ADD COLUMN eff_lease bigint;    -- the earliest lease of the chain, or NULL

-- Derivatives made before their source was recorded were all made from
-- an original of their own file set: the first one.
UPDATE resources d SET source = (
    SELECT min(o.key) FROM resources o JOIN files f ON f.resource = o.key
    WHERE o.parent = d.parent AND o.kind = 'file' AND f.use IN ('', 'original'))
WHERE d.kind = 'file' AND d.key IN (
    SELECT resource FROM files WHERE use IN ('thumbnail', 'access', 'text', 'ocr', 'alto', 'tiles'));

-- The effective access of every row reachable from a root: its own access
-- narrowed by its parent's (the more restrictive visibility, the later
-- embargo, the earlier lease; greatest and least skip NULLs). A row whose
-- chain does not reach a root keeps the hiding default.
WITH RECURSIVE eff(key, rank, embargo, lease) AS (
    SELECT key, CASE visibility WHEN 'public' THEN 0 WHEN 'authenticated' THEN 1 ELSE 2 END, embargo, lease
    FROM resources WHERE parent IS NULL
    UNION ALL
    SELECT c.key,
        greatest(e.rank, CASE c.visibility WHEN 'public' THEN 0 WHEN 'authenticated' THEN 1 ELSE 2 END),
        greatest(c.embargo, e.embargo),
        least(c.lease, e.lease)
    FROM resources c JOIN eff e ON c.parent = e.key
)
UPDATE resources r SET
    eff_visibility = CASE eff.rank WHEN 0 THEN 'public' WHEN 1 THEN 'authenticated' ELSE 'private' END,
    eff_embargo = eff.embargo,
    eff_lease = eff.lease
FROM eff WHERE eff.key = r.key;

-- ... and a derivative's narrowed by its source's (a sibling, so its
-- source's effective access already holds their parent chain).
UPDATE resources d SET
    eff_visibility = CASE
        WHEN d.eff_visibility NOT IN ('public', 'authenticated') OR s.eff_visibility NOT IN ('public', 'authenticated') THEN 'private'
        WHEN d.eff_visibility = 'authenticated' OR s.eff_visibility = 'authenticated' THEN 'authenticated'
        ELSE 'public' END,
    eff_embargo = greatest(d.eff_embargo, s.eff_embargo),
    eff_lease = least(d.eff_lease, s.eff_lease)
FROM resources s WHERE s.key = d.source;

-- what a change of access reaches (AccessDependents): derivatives by source
CREATE INDEX resources_source ON resources (source) WHERE source IS NOT NULL;
-- the works and collections whose effective embargo or lease ends
-- (AccessEnds): the few that have one
CREATE INDEX resources_eff_embargo ON resources (eff_embargo) WHERE eff_embargo IS NOT NULL AND kind IN ('work', 'collection');
CREATE INDEX resources_eff_lease ON resources (eff_lease) WHERE eff_lease IS NOT NULL AND kind IN ('work', 'collection');

-- A search document shows while the resource whose access it follows is
-- in public view: the work (or collection) for its metadata, the file the
-- text was extracted from for a page.
ALTER TABLE search_docs ADD COLUMN access bigint;
UPDATE search_docs SET access = work WHERE key = work;
UPDATE search_docs d SET access = coalesce((
    SELECT min(o.key) FROM resources o JOIN files f ON f.resource = o.key
    WHERE o.parent = d.key AND o.kind = 'file' AND f.use IN ('', 'original')), d.key)
WHERE d.access IS NULL;
