package sqlite

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// dialect is SQLite's statements for the methods its transactions share
// with PostgreSQL's (sqlstore.Tx), those it runs alike filled in by
// sqlstore.Shared. Lists are bound as JSON arrays read by json_each.
var dialect = sqlstore.Shared(sqlstore.Dialect{
	Prefix:  "sqlite: ",
	Insert:  insertRows,
	From:    fromRows,
	Int64s:  func(v []int64) any { return jsonInts(v) },
	Strings: func(v []string) any { return jsonStrings(v) },
	Arg:     arg,
	AnyOf:   anyOf,
	Web: sqlstore.Web{
		CapturesRestOfURL: capturesRestOfURLSQL,
		WebURLCaptures: `SELECT ` + sqlstore.CaptureCols + ` FROM web_captures c JOIN web_urls u ON u.id = c.url
		WHERE c.url = ?1 AND c.time >= ?2 AND (c.time > ?2 OR c.id > ?3) ORDER BY c.time, c.id LIMIT ?4`,
		WebURLCapturesDesc: `SELECT ` + sqlstore.CaptureCols + ` FROM web_captures c JOIN web_urls u ON u.id = c.url
		WHERE c.url = ?1 AND c.time <= ?2 AND (c.time < ?2 OR c.id < ?3) ORDER BY c.time DESC, c.id DESC LIMIT ?4`,
		WebURLsBySURT: webURLsBySURTSQL,
		WebURLRows:    webURLRowsSQL,
		// the one writer holds the whole database
		LockWebFile:     `SELECT ` + sqlstore.WebFileCols + ` FROM web_files WHERE file = ?`,
		LockWebURLs:     webURLRowsSQL,
		WebFileCaptures: fileCapturesSQL,
	},
	OAI: sqlstore.OAI{
		OAIRecordsInSets: oaiRecordsInSets,
		OAISetTree:       oaiSetTreeSQL,
	},
	Accounts: sqlstore.Accounts{
		UserCols:   userCols,
		StringList: func(dst *[]string) any { return (*jsonStringList)(dst) },
		UserByName: `SELECT ` + userCols + ` FROM users u WHERE u.name = ?`,
		UserByKey:  `SELECT ` + userCols + ` FROM users u WHERE u.key = ?`,
		Users:      `SELECT ` + userCols + ` FROM users u WHERE u.key > ? ORDER BY u.key LIMIT ?`,
	},
	AccountWrites: sqlstore.AccountWrites{
		AddGroups: `INSERT INTO user_groups (user_key, grp) SELECT ?, value FROM json_each(?) WHERE true
		ON CONFLICT DO NOTHING`,
		SetOwners: `INSERT INTO owners (resource, user_key) SELECT value, ?2 FROM json_each(?1) WHERE true
		ON CONFLICT (resource) DO UPDATE SET user_key = excluded.user_key`,
		// a range of each of the partial indexes resources_embargo_live and
		// resources_lease_live
		AccessDue: `SELECT ` + sqlstore.ResourceCols + ` FROM resources WHERE key IN (
	SELECT key FROM resources INDEXED BY resources_embargo_live WHERE embargo IS NOT NULL AND deleted IS NULL AND embargo <= ?1
	UNION SELECT key FROM resources INDEXED BY resources_lease_live WHERE lease IS NOT NULL AND deleted IS NULL AND lease <= ?1)
	ORDER BY key LIMIT ?2`,
	},
	Resources: sqlstore.Resources{
		ResourceScanner: sqlstore.ResourceScanner[nullable],
		ScanResourceAnd: sqlstore.ScanResourceAnd[nullable],
		Resources:       `SELECT ` + sqlstore.ResourceCols + ` FROM resources WHERE key IN (SELECT value FROM json_each(?))`,
		Members: `SELECT ` + sqlstore.ResourceColsR + ` FROM memberships m JOIN resources r ON r.key = m.member
		WHERE m.collection = ? AND m.member > ? AND r.deleted IS NULL ORDER BY m.member LIMIT ?`,
		MembersBefore: `SELECT ` + sqlstore.ResourceColsR + ` FROM memberships m JOIN resources r ON r.key = m.member
		WHERE m.collection = ? AND m.member < ? AND r.deleted IS NULL ORDER BY m.member DESC LIMIT ?`,
		Owned: `SELECT ` + sqlstore.ResourceColsR + ` FROM owners o JOIN resources r ON r.key = o.resource
		WHERE o.user_key = ? AND o.resource < ? AND r.kind = ? AND r.deleted IS NULL ORDER BY o.resource DESC LIMIT ?`,
		Roots: `SELECT ` + sqlstore.ResourceCols + ` FROM resources INDEXED BY resources_roots
		WHERE kind = ? AND parent IS NULL AND deleted IS NULL AND key < ? ORDER BY key DESC LIMIT ?`,
		Children: `SELECT ` + sqlstore.ResourceCols + ` FROM resources
		WHERE parent = ? AND position > ? AND deleted IS NULL ORDER BY position LIMIT ?`,
	},
	Uploads: sqlstore.Uploads{
		RenewUpload: `UPDATE uploads SET stored = max(stored, ?), uses = uses + 1 WHERE user_key = ? AND sha256 = ?`,
		ReleaseUploads: `UPDATE uploads SET uses = uses - d.n
		FROM (SELECT value AS sha, count(*) AS n FROM json_each(?2) GROUP BY value) AS d
		WHERE uploads.user_key = ?1 AND uploads.sha256 = d.sha`,
		PruneUploads: `DELETE FROM uploads WHERE (user_key, sha256) IN
		(SELECT user_key, sha256 FROM uploads WHERE stored < ? ORDER BY stored LIMIT ?) RETURNING user_key, size`,
	},
	Jobs: sqlstore.Jobs{
		ClaimJobs: `UPDATE jobs SET state = 'running', attempt = attempt + 1, lease = ?4, worker = ?5
WHERE id IN (SELECT id FROM jobs WHERE queue = ?1 AND state = 'queued' AND run_at <= ?2 ORDER BY run_at, id LIMIT ?3)
  AND NOT EXISTS (SELECT 1 FROM job_queues WHERE name = ?1 AND paused <> 0)
RETURNING ` + sqlstore.JobCols,
		QueueCounts: `SELECT queue, state, count(*), coalesce(sum(run_at <= ?), 0) FROM jobs GROUP BY queue, state`,
	},
	AuthFailureSQL: sqlstore.AuthFailureSQL{
		AddAuthFailure: `INSERT INTO auth_failures (key, failures, last_failure) VALUES (?1, 1, ?2)
		ON CONFLICT (key) DO UPDATE SET
		failures = CASE WHEN auth_failures.last_failure < ?3 THEN 1 ELSE auth_failures.failures + 1 END,
		last_failure = max(auth_failures.last_failure, ?2)
		RETURNING failures`,
		BlockAuthKey: `UPDATE auth_failures SET blocked_until = max(blocked_until, ?2) WHERE key = ?1`,
	},
	WebWrites: sqlstore.WebWrites{
		// one writer: no URL can be there already
		InsertWebURLs: func(v string) string {
			return `INSERT INTO web_urls (surt, url, domain) SELECT surt, url, domain FROM ` + v + ` WHERE true RETURNING id, surt, domain`
		},
		InsertWebURLCounts: func(v string) string {
			return `INSERT INTO web_url_counts (id, domain) SELECT id, domain FROM ` + v + ` WHERE true`
		},
		PutWebFile: `INSERT INTO web_files (` + sqlstore.WebFileCols + `) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (file) DO UPDATE SET work = excluded.work, byte_offset = excluded.byte_offset, records = excluded.records,
		errors = excluded.errors, done = excluded.done, removed = excluded.removed`,
		DeleteWebCaptures: deleteCapturesSQL,
	},
	OAIWrites: sqlstore.OAIWrites{
		ReplaceOAIRecords: replaceOAIRecords,
		AddCounter: `INSERT INTO counters (name, value) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET value = value + excluded.value RETURNING value`,
	},
	SearchStatements: sqlstore.SearchStatements{
		Match:        func(terms []shelfmark.SearchTerm) any { return ftsMatchOf(terms) },
		Window:       searchWindow,
		Hits:         searchHits,
		Matches:      docMatches,
		Lists:        lists,
		BrowseRange:  browseRange,
		Collections:  facetCollections,
		Snippet:      browseSnippet,
		TextTable:    "search_text",
		Materialized: "MATERIALIZED ",
		Pad:          `, NULL, NULL, NULL, NULL, NULL, NULL, NULL`,
	},
	Search: sqlstore.Search{
		PutSearchDocs: putSearchDocs,
		SearchDoc: `SELECT d.key, d.work, d.kind, d.format, x.title, x.body, coalesce(d.access, 0), x.creator, x.subject, d.date_lo, d.date_hi, x.lang
		FROM search_docs d JOIN search_text x ON x.key = d.key WHERE d.key = ?`,
		// the primary key and search_docs_work; a trigger removes the text
		DeleteSearchDocs: `DELETE FROM search_docs WHERE key IN (SELECT value FROM json_each(?1)
		UNION ALL SELECT key FROM search_docs WHERE work IN (SELECT value FROM json_each(?1)))`,
	},
	Reads: sqlstore.Reads{
		ChildFiles:      childFilesSQL,
		PageFiles:       pageFilesSQL,
		PageFileScanner: sqlstore.PageFileScanner[nullable],
		// resources_children, one look-up a parent
		FirstChildren: `SELECT p.value, (SELECT c.key FROM resources c WHERE c.parent = p.value AND c.kind = ?2 AND c.deleted IS NULL
  ORDER BY c.position LIMIT 1) AS first FROM json_each(?1) p WHERE first IS NOT NULL`,
	},
})

// arg is the placeholder of the nth argument of a statement.
func arg(n int) string { return "?" + strconv.Itoa(n) }

// userCols are the columns of a user, from users u: its row and its
// groups as a JSON array (jsonStringList).
const userCols = `u.key, u.name, u.admin, u.disabled, u.password_hash, u.created,
	(SELECT json_group_array(grp) FROM user_groups g WHERE g.user_key = u.key)`

// jsonStringList scans a JSON array of strings (or NULL, none).
type jsonStringList []string

// Scan implements sql.Scanner.
func (l *jsonStringList) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case nil:
		*l = nil
		return nil
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		return fmt.Errorf("a list of strings of type %T", src)
	}
	if err := json.Unmarshal(b, (*[]string)(l)); err != nil {
		return fmt.Errorf("a list of strings: %w", err)
	}
	return nil
}

// nullable is sqlstore.NullInt for database/sql: scanning into it
// allocates nothing.
type nullable struct{ sql.NullInt64 }

// Get implements sqlstore.NullInt.
func (n nullable) Get() (int64, bool) { return n.Int64, n.Valid }

// childFilesSQL takes the first live files of each parent by position,
// up to a limit a parent, as one walk of the index resources_children per
// parent, bounded by the position of the parent's last file to take
// (SQLite's form of a lateral join: a correlated subquery finds that
// position, at most the limit's entries into the same index, and the walk
// stops there; a parent's live children have distinct positions, 1..n
// once ordered and UnorderedBase+key otherwise, so the walk takes exactly
// the first limit). That position is sought only for a parent with at
// least limit entries of any kind or state in the index, which the index
// alone tells (the NOT EXISTS, covering): the live files of a parent with
// fewer are all taken, and a book's page of three files then costs no
// look-up of its rows beyond the walk's own (the filtered search reads
// each entry's row for its kind and tombstone: a third of the statement's
// time for a book's pages). No temporary table is built: taking the keys
// in a subquery and then each row by its key, as this did before, built
// an index of the keys a parent and sought every row twice, at a fifth
// more time for a book's pages.
const childFilesSQL = `SELECT ` + sqlstore.ResourceColsR + `, f.name, f.media_type, f.size, f.sha256, f.sha512, f.md5, f.use, f.external_url,
  f.format_id, f.format_name, f.format_version, f.format_mime, f.width, f.height, f.pages, f.format_note` + childFilesFrom

// pageFilesSQL reads sqlstore.PageFileCols of the rows childFilesSQL
// reads.
const pageFilesSQL = `SELECT ` + sqlstore.PageFileCols + childFilesFrom

// childFilesFrom is where childFilesSQL and pageFilesSQL read, in no
// order: sqlstore.Tx orders the rows (an ORDER BY here would copy them
// all into a temporary B-tree before returning the first).
const childFilesFrom = `
FROM json_each(?1) p JOIN resources r ON r.parent = p.value AND r.kind = 'file' AND r.deleted IS NULL
  AND r.position <= CASE WHEN NOT EXISTS (SELECT 1 FROM resources c WHERE c.parent = p.value ORDER BY c.position LIMIT 1 OFFSET ?2 - 1)
    THEN 9223372036854775807
    ELSE coalesce((SELECT c.position FROM resources c WHERE c.parent = p.value AND c.kind = 'file' AND c.deleted IS NULL
      ORDER BY c.position LIMIT 1 OFFSET ?2 - 1), 9223372036854775807) END
JOIN files f ON f.resource = r.key`
