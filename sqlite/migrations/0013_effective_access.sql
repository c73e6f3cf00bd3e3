-- Effective access (effective.go in the root package): who may see a
-- resource once everything that holds it (its parent chain) and, for a
-- derivative, the file it was made from are taken into account, stored on
-- its row so that the access policy and every index (search, the OAI-PMH
-- view, the sitemap) decide from one value read with the row.
-- Times are Unix microseconds (UTC).

ALTER TABLE resources ADD COLUMN source INTEGER;     -- a derivative's source file, or NULL
-- the default hides: a row nobody computed an effective access for is
-- never shown by mistake
ALTER TABLE resources ADD COLUMN eff_visibility TEXT NOT NULL DEFAULT 'private';
ALTER TABLE resources ADD COLUMN eff_embargo INTEGER; -- the latest embargo of the chain, or NULL
ALTER TABLE resources ADD COLUMN eff_lease INTEGER;   -- the earliest lease of the chain, or NULL

-- Derivatives made before their source was recorded were all made from
-- an original of their own file set: the first one.
UPDATE resources SET source = (
    SELECT min(o.key) FROM resources o JOIN files f ON f.resource = o.key
    WHERE o.parent = resources.parent AND o.kind = 'file' AND f.use IN ('', 'original'))
WHERE kind = 'file' AND key IN (
    SELECT resource FROM files WHERE use IN ('thumbnail', 'access', 'text', 'ocr', 'alto', 'tiles'));

-- The effective access of every row reachable from a root: its own access
-- narrowed by its parent's (the more restrictive visibility, the later
-- embargo, the earlier lease). A row whose chain does not reach a root
-- keeps the hiding default.
WITH RECURSIVE eff(key, rank, embargo, lease) AS (
    SELECT key, CASE visibility WHEN 'public' THEN 0 WHEN 'authenticated' THEN 1 ELSE 2 END, embargo, lease
    FROM resources WHERE parent IS NULL
    UNION ALL
    SELECT c.key,
        max(e.rank, CASE c.visibility WHEN 'public' THEN 0 WHEN 'authenticated' THEN 1 ELSE 2 END),
        CASE WHEN c.embargo IS NULL THEN e.embargo WHEN e.embargo IS NULL THEN c.embargo ELSE max(c.embargo, e.embargo) END,
        CASE WHEN c.lease IS NULL THEN e.lease WHEN e.lease IS NULL THEN c.lease ELSE min(c.lease, e.lease) END
    FROM resources c JOIN eff e ON c.parent = e.key
)
UPDATE resources SET
    eff_visibility = CASE eff.rank WHEN 0 THEN 'public' WHEN 1 THEN 'authenticated' ELSE 'private' END,
    eff_embargo = eff.embargo,
    eff_lease = eff.lease
FROM eff WHERE eff.key = resources.key;

-- ... and a derivative's narrowed by its source's (a sibling, so its
-- source's effective access already holds their parent chain).
UPDATE resources SET
    eff_visibility = CASE
        WHEN resources.eff_visibility NOT IN ('public', 'authenticated') OR s.eff_visibility NOT IN ('public', 'authenticated') THEN 'private'
        WHEN resources.eff_visibility = 'authenticated' OR s.eff_visibility = 'authenticated' THEN 'authenticated'
        ELSE 'public' END,
    eff_embargo = CASE WHEN s.eff_embargo IS NULL THEN resources.eff_embargo WHEN resources.eff_embargo IS NULL THEN s.eff_embargo
        ELSE max(resources.eff_embargo, s.eff_embargo) END,
    eff_lease = CASE WHEN s.eff_lease IS NULL THEN resources.eff_lease WHEN resources.eff_lease IS NULL THEN s.eff_lease
        ELSE min(resources.eff_lease, s.eff_lease) END
FROM resources s WHERE s.key = resources.source;

-- what a change of access reaches (AccessDependents): derivatives by source
CREATE INDEX resources_source ON resources (source) WHERE source IS NOT NULL;
-- the works and collections whose effective embargo or lease ends
-- (AccessEnds): the few that have one
CREATE INDEX resources_eff_embargo ON resources (eff_embargo) WHERE eff_embargo IS NOT NULL AND kind IN ('work', 'collection');
CREATE INDEX resources_eff_lease ON resources (eff_lease) WHERE eff_lease IS NOT NULL AND kind IN ('work', 'collection');

-- A search document shows while the resource whose access it follows is
-- in public view: the work (or collection) for its metadata, the file the
-- text was extracted from for a page.
ALTER TABLE search_docs ADD COLUMN access INTEGER;
UPDATE search_docs SET access = work WHERE key = work;
UPDATE search_docs SET access = coalesce((
    SELECT min(o.key) FROM resources o JOIN files f ON f.resource = o.key
    WHERE o.parent = search_docs.key AND o.kind = 'file' AND f.use IN ('', 'original')), key)
WHERE access IS NULL;
