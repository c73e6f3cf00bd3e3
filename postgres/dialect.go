package postgres

import (
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// dialect is PostgreSQL's statements for the methods its transactions
// share with SQLite's (sqlstore.Tx), those it runs alike filled in by
// sqlstore.Shared. Lists are bound as arrays, read by = ANY($n).
var dialect = sqlstore.Shared(sqlstore.Dialect{
	Prefix:  "postgres: ",
	Insert:  insertRows,
	From:    fromRows,
	Int64s:  func(v []int64) any { return v },
	Strings: func(v []string) any { return v },
	Arg:     arg,
	AnyOf:   anyOf,
	Web: sqlstore.Web{
		CapturesRestOfURL: capturesRestOfURLSQL,
		WebURLCaptures: `SELECT ` + sqlstore.CaptureCols + ` FROM web_captures c JOIN web_urls u ON u.id = c.url
WHERE c.url = $1 AND (c.time, c.id) > ($2, $3) ORDER BY c.time, c.id LIMIT $4`,
		WebURLCapturesDesc: `SELECT ` + sqlstore.CaptureCols + ` FROM web_captures c JOIN web_urls u ON u.id = c.url
WHERE c.url = $1 AND (c.time, c.id) < ($2, $3) ORDER BY c.time DESC, c.id DESC LIMIT $4`,
		WebURLsBySURT:   `SELECT ` + sqlstore.WebURLCols + sqlstore.WebURLsFrom + ` WHERE u.surt = ANY($1)`,
		WebURLRows:      `SELECT ` + sqlstore.WebURLCols + sqlstore.WebURLsFrom + ` WHERE u.id = ANY($1) ORDER BY u.id`,
		LockWebFile:     `SELECT ` + sqlstore.WebFileCols + ` FROM web_files WHERE file = $1 FOR UPDATE`,
		LockWebURLs:     `SELECT ` + sqlstore.WebURLCols + sqlstore.WebURLsFrom + ` WHERE u.id = ANY($1) ORDER BY u.id FOR UPDATE`,
		WebFileCaptures: `SELECT ` + sqlstore.CaptureCols + sqlstore.CapturesFrom + ` WHERE c.file = $1 AND c.id > $2 ORDER BY c.id LIMIT $3`,
	},
	OAI: sqlstore.OAI{
		// the counter "seq" is the last change number taken (change_seq,
		// see tx.go)
		Counter: `SELECT value FROM counters WHERE name = $1
UNION ALL SELECT last_value FROM change_seq WHERE $1 = 'seq'`,
		OAIRecordsInSets: oaiRecordsInSets,
		OAISetTree: `SELECT key, true FROM oai_sets WHERE spec = $1
UNION ALL SELECT key, false FROM oai_sets WHERE spec >= $2 AND spec < $3`,
	},
	Accounts: sqlstore.Accounts{
		UserCols:   userCols,
		StringList: func(dst *[]string) any { return dst },
		UserByName: `SELECT ` + userCols + ` FROM users u WHERE u.name = $1`,
		UserByKey:  `SELECT ` + userCols + ` FROM users u WHERE u.key = $1`,
		Users:      `SELECT ` + userCols + ` FROM users u WHERE u.key > $1 ORDER BY u.key LIMIT $2`,
	},
	AccountWrites: sqlstore.AccountWrites{
		AddGroups: `INSERT INTO user_groups (user_key, grp) SELECT $1, g FROM unnest($2::text[]) g
ON CONFLICT DO NOTHING`,
		SetOwners: `INSERT INTO owners (resource, user_key) SELECT DISTINCT k, $2::bigint FROM unnest($1::bigint[]) k
ON CONFLICT (resource) DO UPDATE SET user_key = excluded.user_key`,
		// a range of each of the partial indexes resources_embargo_live and
		// resources_lease_live
		AccessDue: `SELECT ` + sqlstore.ResourceCols + ` FROM resources WHERE key IN (
SELECT key FROM resources WHERE embargo IS NOT NULL AND deleted IS NULL AND embargo <= $1
UNION SELECT key FROM resources WHERE lease IS NOT NULL AND deleted IS NULL AND lease <= $1)
ORDER BY key LIMIT $2`,
	},
	Fields: sqlstore.Fields{
		// the shared statement, read up to the change horizon: a change
		// whose transaction took a lower number and is still open holds
		// back every later one (see tx.go)
		Changes: `SELECT ` + sqlstore.ResourceCols + ` FROM resources
WHERE seq > $1 AND seq <= (SELECT value FROM counters WHERE name = 'seq_horizon') ORDER BY seq, key LIMIT $2`,
	},
	Resources: sqlstore.Resources{
		ResourceScanner: sqlstore.ResourceScanner[nullable],
		ScanResourceAnd: sqlstore.ScanResourceAnd[nullable],
		Resources:       `SELECT ` + sqlstore.ResourceCols + ` FROM resources WHERE key = ANY($1) ORDER BY key`,
		Members:         membersSQL,
		MembersBefore:   membersBeforeSQL,
		Owned:           ownedSQL,
		Roots:           rootsSQL,
		Children:        childrenSQL,
	},
	Uploads: sqlstore.Uploads{
		// a concurrent record of the same user and bytes waits for this one
		// (the primary key), then renews it
		RenewUpload: `UPDATE uploads SET stored = greatest(stored, $1), uses = uses + 1 WHERE user_key = $2 AND sha256 = $3`,
		ReleaseUploads: `UPDATE uploads u SET uses = u.uses - d.n
FROM (SELECT s, count(*) AS n FROM unnest($2::text[]) s GROUP BY s) d
WHERE u.user_key = $1 AND u.sha256 = d.s`,
		PruneUploads: `DELETE FROM uploads WHERE (user_key, sha256) IN
		(SELECT user_key, sha256 FROM uploads WHERE stored < $1 ORDER BY stored LIMIT $2 FOR UPDATE SKIP LOCKED) RETURNING user_key, size`,
	},
	Jobs: sqlstore.Jobs{
		ClaimJobs:     claimSQL,
		QueueCounts:   `SELECT queue, state, count(*), count(*) FILTER (WHERE run_at <= $1) FROM jobs GROUP BY queue, state`,
		JobHeldLocked: `SELECT 1 FROM jobs WHERE id = $1 AND state = 'running' AND worker = $2 AND attempt = $3 FOR UPDATE`,
	},
	AuthFailureSQL: sqlstore.AuthFailureSQL{
		AddAuthFailure: `INSERT INTO auth_failures (key, failures, last_failure) VALUES ($1, 1, $2)
		ON CONFLICT (key) DO UPDATE SET
		failures = CASE WHEN auth_failures.last_failure < $3 THEN 1 ELSE auth_failures.failures + 1 END,
		last_failure = greatest(auth_failures.last_failure, $2)
		RETURNING failures`,
		BlockAuthKey: `UPDATE auth_failures SET blocked_until = greatest(blocked_until, $2) WHERE key = $1`,
	},
	WebWrites: sqlstore.WebWrites{
		// the new URLs and their counts in one statement
		InsertWebURLs: func(v string) string {
			return `WITH ins AS (
    INSERT INTO web_urls (surt, url, domain) SELECT surt, url, domain FROM ` + v + `
    ON CONFLICT (surt) DO NOTHING RETURNING id, surt, domain
), counts AS (
    INSERT INTO web_url_counts (id, domain) SELECT id, domain FROM ins
)
SELECT id, surt, domain FROM ins`
		},
		PutWebFile: `INSERT INTO web_files (` + sqlstore.WebFileCols + `) VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (file) DO UPDATE SET work = EXCLUDED.work, byte_offset = EXCLUDED.byte_offset, records = EXCLUDED.records,
errors = EXCLUDED.errors, done = EXCLUDED.done, removed = EXCLUDED.removed`,
		DeleteWebCaptures: `DELETE FROM web_captures WHERE id = ANY($1)`,
	},
	OAIWrites: sqlstore.OAIWrites{
		// a claim (see tx.go and the migration 0028_parallel_commits)
		NextSeq:           `SELECT shelfmark_claim_seq($1) + $1 - 1`,
		ReplaceOAIRecords: replaceOAIRecords,
		AddCounter: `INSERT INTO counters (name, value) VALUES ($1, $2)
ON CONFLICT (name) DO UPDATE SET value = counters.value + EXCLUDED.value RETURNING value`,
	},
	SearchStatements: sqlstore.SearchStatements{
		Match:       func(terms []shelfmark.SearchTerm) any { return match{terms} },
		Window:      searchWindow,
		Hits:        searchHits,
		Matches:     docMatches,
		Lists:       lists,
		BrowseRange: browseRange,
		Collections: facetCollections,
		Snippet:     `btrim(left(coalesce(nullif(x.body, ''), x.title, ''), ` + strconv.Itoa(sqlstore.BrowseSnippet) + `))`,
		TextTable:   "search_docs",
		Float:       "::float8",
		Pad:         `, NULL::bigint, NULL::bigint, NULL, NULL, NULL, NULL, NULL::float8`,
		Collate:     ` COLLATE "C"`, // byte order, as on SQLite
		FirstArgs:   []any{pgx.QueryExecModeExec},
	},
	Search: sqlstore.Search{
		PutSearchDocs: putSearchDocs,
		SearchDoc:     `SELECT key, work, kind, format, title, body, coalesce(access, 0), creator, subject, date_lo, date_hi, lang FROM search_docs WHERE key = $1`,
		// the primary key and search_docs_work_key
		DeleteSearchDocs: `DELETE FROM search_docs WHERE key = ANY($1) OR work = ANY($1)`,
	},
	Reads: sqlstore.Reads{
		ChildFiles:      childFilesSQL,
		PageFiles:       pageFilesSQL,
		PageFileScanner: sqlstore.PageFileScanner[nullable],
		// resources_children, one look-up a parent
		FirstChildren: `SELECT p.key, c.key FROM unnest($1::bigint[]) AS p(key) CROSS JOIN LATERAL (
  SELECT key FROM resources c WHERE c.parent = p.key AND c.kind = $2 AND c.deleted IS NULL ORDER BY c.position LIMIT 1) c`,
	},
})

// arg is the placeholder of the nth argument of a statement.
func arg(n int) string { return "$" + strconv.Itoa(n) }

// userCols are the columns of a user, from users u: its row and its
// groups as an array.
const userCols = `u.key, u.name, u.admin, u.disabled, u.password_hash, u.created,
    ARRAY(SELECT grp FROM user_groups g WHERE g.user_key = u.key ORDER BY grp)`

// nullable is sqlstore.NullInt for pgx, which scans an int8 into it
// natively (pgtype.Int64Scanner), allocating nothing.
type nullable struct{ pgtype.Int8 }

// Get implements sqlstore.NullInt.
func (n nullable) Get() (int64, bool) { return n.Int64, n.Valid }

// membersSQL reads a page of members, walking the collection's memberships
// in key order and looking each member up: the LATERAL subquery with OFFSET
// 0 keeps the planner from turning it into a join driven by resources. As a
// plain join, page 1 of a collection whose members are not the first
// resources walked resources from the first key (61 ms at 1,000,000
// members after 34,000 other resources; 0.5 ms this way).
const membersSQL = `SELECT ` + sqlstore.ResourceColsR + ` FROM memberships m CROSS JOIN LATERAL (
SELECT * FROM resources r WHERE r.key = m.member AND r.deleted IS NULL OFFSET 0) r
WHERE m.collection = $1 AND m.member > $2 ORDER BY m.member LIMIT $3`

// membersBeforeSQL reads a page of members backwards (newest first), over
// the memberships primary key.
const membersBeforeSQL = `SELECT ` + sqlstore.ResourceColsR + ` FROM memberships m CROSS JOIN LATERAL (
SELECT * FROM resources r WHERE r.key = m.member AND r.deleted IS NULL OFFSET 0) r
WHERE m.collection = $1 AND m.member < $2 ORDER BY m.member DESC LIMIT $3`

// ownedSQL reads a page of a depositor's resources of a kind, newest
// first, over owners_user.
const ownedSQL = `SELECT ` + sqlstore.ResourceColsR + ` FROM owners o CROSS JOIN LATERAL (
SELECT * FROM resources r WHERE r.key = o.resource AND r.kind = $3 AND r.deleted IS NULL OFFSET 0) r
WHERE o.user_key = $1 AND o.resource < $2 ORDER BY o.resource DESC LIMIT $4`

// rootsSQL reads a page of roots, over resources_roots.
const rootsSQL = `SELECT ` + sqlstore.ResourceCols + ` FROM resources
WHERE kind = $1 AND parent IS NULL AND deleted IS NULL AND key < $2 ORDER BY key DESC LIMIT $3`

// childrenSQL reads a page of children, over (parent, position).
const childrenSQL = `SELECT ` + sqlstore.ResourceCols + ` FROM resources
WHERE parent = $1 AND position > $2 AND deleted IS NULL ORDER BY position LIMIT $3`

// claimSQL takes the oldest ready jobs of an unpaused queue. FOR UPDATE
// SKIP LOCKED lets workers on several machines claim at once: each skips
// the rows another is taking, so no job is handed out twice. The rows are
// picked once, in a MATERIALIZED CTE: as a subquery joined by UPDATE …
// FROM, the planner may run the pick again, and rows locked by a run whose
// result is not used stay queued but hidden from other claimers until the
// transaction ends.
const claimSQL = `WITH c AS MATERIALIZED (
    SELECT id FROM jobs
    WHERE queue = $1 AND state = 'queued' AND run_at <= $2
      AND NOT EXISTS (SELECT 1 FROM job_queues WHERE name = $1 AND paused)
    ORDER BY run_at, id LIMIT $3
    FOR UPDATE SKIP LOCKED)
UPDATE jobs j SET state = 'running', attempt = j.attempt + 1, lease = $4, worker = $5
FROM c WHERE j.id = c.id
RETURNING j.id, j.queue, j.resource, j.state, j.attempt, j.run_at, j.lease, j.worker, j.error, j.created`

// childFilesSQL reads each parent's first files through the index on
// (parent, position): one short index range per parent.
const childFilesSQL = `SELECT ` + sqlstore.ResourceColsR + `, f.name, f.media_type, f.size, f.sha256, f.sha512, f.md5, f.use, f.external_url,
  f.format_id, f.format_name, f.format_version, f.format_mime, f.width, f.height, f.pages, f.format_note` + childFilesFrom

// pageFilesSQL reads sqlstore.PageFileCols of the rows childFilesSQL
// reads.
const pageFilesSQL = `SELECT ` + sqlstore.PageFileCols + childFilesFrom

// childFilesFrom is where childFilesSQL and pageFilesSQL read, in no
// order: sqlstore.Tx orders the rows.
const childFilesFrom = `
FROM unnest($1::bigint[]) AS p(key) CROSS JOIN LATERAL (
  SELECT * FROM resources c WHERE c.parent = p.key AND c.kind = 'file' AND c.deleted IS NULL ORDER BY c.position LIMIT $2) r
JOIN files f ON f.resource = r.key`
