package sqlstore

import (
	"reflect"
	"regexp"
	"strconv"
)

// shared holds the statements both dialects run alike, written once with
// PostgreSQL's placeholders: $n for the nth argument and = ANY($n) for a
// list bound by Dialect.Int64s or Strings. Shared rewrites them for a
// dialect.
var shared = Dialect{
	FixitySQL:        fixityShared,        // fixity.go
	AccessRequestSQL: accessRequestShared, // access_requests.go
	UsageSQL:         usageShared,         // usage.go
	Web: Web{
		WebFile:        `SELECT ` + WebFileCols + ` FROM web_files WHERE file = $1`,
		WebFiles:       `SELECT ` + WebFileCols + ` FROM web_files WHERE file > $1 ORDER BY file LIMIT $2`,
		WebDomainRows:  `SELECT ` + WebDomainCols + ` FROM web_domains WHERE id = ANY($1) ORDER BY id`,
		WebURLView:     WebURLViewSQL,
		WebInbound:     WebInboundSQL,
		WebCaptureRows: `SELECT ` + CaptureCols + CapturesFrom + ` WHERE c.id = ANY($1) ORDER BY c.id`,
		// the domain's range of the partial index web_url_counts_top, the
		// domain found by name once (a join would lose the index's order)
		WebTopURLs: `SELECT ` + WebURLCols + ` FROM web_url_counts n JOIN web_urls u ON u.id = n.id
WHERE n.domain = (SELECT id FROM web_domains WHERE name = $1) AND n.inbound > 0 ORDER BY n.inbound DESC, n.id LIMIT $2`,
		CapturesFrom: `SELECT ` + CaptureCols + ` FROM web_urls u JOIN web_captures c ON c.url = u.id
WHERE u.surt >= $1 AND u.surt < $2 AND c.time >= $3 AND c.time < $4
ORDER BY u.surt, c.time, c.id LIMIT $5`,
		CapturesFromOpen: `SELECT ` + CaptureCols + ` FROM web_urls u JOIN web_captures c ON c.url = u.id
WHERE u.surt >= $1 AND c.time >= $2 AND c.time < $3
ORDER BY u.surt, c.time, c.id LIMIT $4`,
		CapturesAfter: `SELECT ` + CaptureCols + ` FROM web_urls u JOIN web_captures c ON c.url = u.id
WHERE u.surt > $1 AND u.surt < $2 AND c.time >= $3 AND c.time < $4
ORDER BY u.surt, c.time, c.id LIMIT $5`,
		CapturesAfterOpen: `SELECT ` + CaptureCols + ` FROM web_urls u JOIN web_captures c ON c.url = u.id
WHERE u.surt > $1 AND c.time >= $2 AND c.time < $3
ORDER BY u.surt, c.time, c.id LIMIT $4`,
		// the first entries of web_domains_top
		WebTopDomains: `SELECT ` + WebDomainCols + ` FROM web_domains WHERE inbound > 0 ORDER BY inbound DESC, id LIMIT $1`,
	},
	Search: Search{
		// the primary key (work, facet, value)
		DeleteSearchFacets: `DELETE FROM search_facets WHERE work = ANY($1)`,
	},
	OAI: OAI{
		OAIRecord:      `SELECT ` + OAIColsPayload + ` FROM oai_records WHERE key = $1 AND prefix = $2`,
		OAIRecordsOf:   `SELECT ` + OAICols + ` FROM oai_records WHERE key = ANY($1) ORDER BY key, prefix`,
		OAISets:        `SELECT key, spec, name FROM oai_sets WHERE key > $1 ORDER BY key LIMIT $2`,
		OAISetsByKey:   `SELECT key, spec, name FROM oai_sets WHERE key = ANY($1) ORDER BY key`,
		Counter:        `SELECT value FROM counters WHERE name = $1`,
		OAIList:        `SELECT ` + OAICols + ` FROM oai_records WHERE prefix = $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4`,
		OAIListPayload: `SELECT ` + OAIColsPayload + ` FROM oai_records WHERE prefix = $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4`,
		OAICount: `SELECT
    (SELECT n FROM oai_counts WHERE prefix = $1 AND collection = 0),
    (SELECT seq FROM oai_records WHERE prefix = $1 ORDER BY seq LIMIT 1),
    (SELECT seq FROM oai_records WHERE prefix = $1 ORDER BY seq DESC LIMIT 1)`,
		OAISetCount: `SELECT
    (SELECT n FROM oai_counts WHERE prefix = $1 AND collection = $2),
    (SELECT seq FROM oai_set_records WHERE collection = $2 AND prefix = $1 ORDER BY seq LIMIT 1),
    (SELECT seq FROM oai_set_records WHERE collection = $2 AND prefix = $1 ORDER BY seq DESC LIMIT 1)`,
		OAISeqRange: `SELECT
    (SELECT seq FROM oai_records WHERE prefix = $1 AND datestamp >= $2 ORDER BY datestamp, seq LIMIT 1),
    (SELECT seq FROM oai_records WHERE prefix = $1 AND datestamp <= $3 ORDER BY datestamp DESC, seq DESC LIMIT 1),
    (SELECT max(seq) FROM oai_records)`,
	},
	Accounts: Accounts{
		TokenByHash: `SELECT ` + TokenCols + ` FROM tokens WHERE hash = $1`,
		Tokens:      `SELECT ` + TokenCols + ` FROM tokens WHERE user_key = $1 AND kind = $2 ORDER BY key DESC`,
		GrantsOn:    `SELECT resource, principal, role, expires FROM grants WHERE resource = ANY($1) ORDER BY resource, principal, role`,
		GrantsTo:    `SELECT resource, principal, role, expires FROM grants WHERE principal = ANY($1) ORDER BY resource, principal, role`,
		Owners:      `SELECT resource, user_key FROM owners WHERE resource = ANY($1)`,
		Setting:     `SELECT value FROM settings WHERE name = $1`,
	},
	AccountWrites: AccountWrites{
		// ON CONFLICT DO NOTHING: no error aborts the transaction
		InsertUser: `INSERT INTO users (name, admin, disabled, password_hash, created) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (name) DO NOTHING RETURNING key`,
		UpdateUser:  `UPDATE users SET admin = $2, disabled = $3, password_hash = $4 WHERE key = $1`,
		ClearGroups: `DELETE FROM user_groups WHERE user_key = $1`,
		InsertToken: `INSERT INTO tokens (user_key, kind, hint, hash, scope, note, created, expires, revoked)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING key`,
		RevokeToken: `UPDATE tokens SET revoked = $3 WHERE key = $1 AND user_key = $2 AND revoked IS NULL`,
		InitSetting: `INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
		PutSetting:  `INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
		// the partial index grants_expires finds them without reading the
		// roles, which never expire
		PruneGrants: `DELETE FROM grants WHERE (resource, principal, role) IN
    (SELECT resource, principal, role FROM grants WHERE expires IS NOT NULL AND expires <= $1 ORDER BY expires LIMIT $2)
RETURNING resource, principal, role, expires`,
	},
	Resources: Resources{
		Resource: `SELECT ` + ResourceCols + ` FROM resources WHERE key = $1`,
		// up holds each level's key and parent (a primary-key read a
		// level), the rows are read by key once the chain is known
		Chain: `WITH RECURSIVE up(k, p, n) AS (
    SELECT key, parent, 1 FROM resources WHERE key = $1
    UNION ALL SELECT r.key, r.parent, up.n + 1 FROM up JOIN resources r ON r.key = up.p WHERE up.n < $2)
SELECT ` + ResourceCols + ` FROM up JOIN resources ON key = up.k ORDER BY up.n`,
		MemberOf: `SELECT m.collection FROM memberships m JOIN resources r ON r.key = m.collection
WHERE m.member = $1 AND r.deleted IS NULL ORDER BY m.collection`,
	},
	Uploads: Uploads{
		Uploads:     `SELECT sha256, size, stored FROM uploads WHERE user_key = $1 AND sha256 = ANY($2)`,
		UploadUsage: `SELECT user_key, files, bytes FROM upload_usage WHERE user_key IN ($1, 0)`,
		FilesHolding: `SELECT f.resource, f.size FROM files f JOIN resources r ON r.key = f.resource
WHERE f.sha256 = $1 AND f.sha256 <> '' AND r.deleted IS NULL ORDER BY f.resource LIMIT $2`,
		PutUpload:     `INSERT INTO uploads (user_key, sha256, size, stored) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
		DeleteUploads: `DELETE FROM uploads WHERE user_key = $1 AND sha256 = ANY($2)`,
	},
	Jobs: Jobs{
		RequeueJob: `UPDATE jobs SET state = 'queued', run_at = $2, lease = 0, error = $3 WHERE id = $1`,
		FailJob:    `UPDATE jobs SET state = 'failed', lease = 0, error = $2 WHERE id = $1`,
		RenewJobs:  `UPDATE jobs SET lease = $3 WHERE id = ANY($1) AND worker = $2 AND state = 'running'`,
		SetQueuePaused: `INSERT INTO job_queues (name, paused) VALUES ($1, $2)
ON CONFLICT (name) DO UPDATE SET paused = excluded.paused`,
		ListJobs: `SELECT ` + JobCols + ` FROM jobs WHERE id > $1 AND ($2 = '' OR queue = $2) AND ($3 = '' OR state = $3)
ORDER BY id LIMIT $4`,
		JobHeld:       jobHeldSQL,
		JobHeldLocked: jobHeldSQL,
		RetryJobs: `UPDATE jobs SET state = 'queued', attempt = 0, run_at = $1, lease = 0
WHERE state = 'failed' AND ($2 = '' OR queue = $2) AND ($4 = 0 OR id = ANY($3))`,
		DeleteJobs: `DELETE FROM jobs WHERE id = ANY($1)`,
	},
	ResourceWrites: ResourceWrites{
		UpdateResource: `UPDATE resources SET visibility = $2, embargo = $3, lease = $4, version = $5, seq = $6, modified = $7,
deleted = $8, eff_visibility = $9, eff_embargo = $10, eff_lease = $11 WHERE key = $1`,
		// resources_children and resources_source
		AccessDependents: `SELECT ` + ResourceCols + ` FROM resources WHERE parent = ANY($1) AND deleted IS NULL
UNION SELECT ` + ResourceCols + ` FROM resources WHERE source = ANY($1) AND deleted IS NULL`,
		DeleteGrants: `DELETE FROM grants WHERE resource = $1`,
		AllocateKeys: `UPDATE counters SET value = value + $1 WHERE name = 'key' RETURNING value`,
	},
	AuthFailureSQL: AuthFailureSQL{
		BlockedAuthKeys: `SELECT key, failures, last_failure, blocked_until FROM auth_failures
WHERE blocked_until > $1 ORDER BY blocked_until DESC LIMIT $2`,
		ClearAuthFailures: `DELETE FROM auth_failures WHERE key = $1 AND blocked_until <= $2`,
		PruneAuthFailures: `DELETE FROM auth_failures WHERE last_failure < $1 AND blocked_until <= $2`,
	},
	Fields: Fields{
		Fields:     `SELECT predicate, objects FROM fields WHERE resource = $1 ORDER BY predicate`,
		FieldsOnly: `SELECT predicate, objects FROM fields WHERE resource = $1 AND predicate = ANY($2) ORDER BY predicate`,
		FieldsOf:   `SELECT resource, predicate, objects FROM fields WHERE resource = ANY($1) ORDER BY resource, predicate`,
		MemberOfMany: `SELECT m.member, m.collection FROM memberships m JOIN resources r ON r.key = m.collection
WHERE m.member = ANY($1) AND r.deleted IS NULL ORDER BY m.member, m.collection`,
		// one range of resources_seq (seq, key): a page costs the same at
		// any depth. One commit gives one seq to every resource an
		// operation changes (a group, a tombstoned tree), so a page may end
		// inside a seq; the caller resumes after the last seq it has read
		// whole.
		Changes: `SELECT ` + ResourceCols + ` FROM resources WHERE seq > $1 ORDER BY seq, key LIMIT $2`,
	},
	OAIWrites: OAIWrites{
		DeleteOAISets: `DELETE FROM oai_sets WHERE key = ANY($1)`,
		NextSeq:       `UPDATE counters SET value = value + $1 WHERE name = 'seq' RETURNING value`,
	},
	SourceSQL: SourceSQL{
		Sources:      `SELECT source_key, resource FROM sources WHERE source_key = ANY($1)`,
		SourceKeysOf: `SELECT resource, source_key FROM sources WHERE resource = ANY($1) ORDER BY resource, source_key`,
	},
	Reads: Reads{
		FilesOfWorks: `SELECT fs.parent, f.name, f.media_type, f.size, f.sha256, f.sha512, f.md5, f.use, f.external_url
FROM resources fs
JOIN resources fr ON fr.parent = fs.key
JOIN files f ON f.resource = fr.key
WHERE fs.parent = ANY($1) AND fs.kind = 'fileset' AND fs.deleted IS NULL
  AND fr.kind = 'file' AND fr.deleted IS NULL AND f.use = $2
  AND fr.eff_visibility = 'public' AND (fr.eff_embargo IS NULL OR fr.eff_embargo <= $3) AND (fr.eff_lease IS NULL OR fr.eff_lease > $3)
ORDER BY fs.parent, fs.position, fr.position, fr.key`,
		AccessEnds: `SELECT key FROM resources WHERE eff_embargo > $1 AND eff_embargo <= $2 AND eff_embargo IS NOT NULL AND kind IN ('work', 'collection')
UNION SELECT key FROM resources WHERE eff_lease > $1 AND eff_lease <= $2 AND eff_lease IS NOT NULL AND kind IN ('work', 'collection')
ORDER BY key`,
		ReferencedBlobs: `SELECT sha256 FROM files WHERE sha256 = ANY($1) AND sha256 <> ''
UNION SELECT sha256 FROM uploads WHERE sha256 = ANY($1)`,
	},
	FileSQL: FileSQL{
		File: `SELECT ` + FileCols + ` FROM files WHERE resource = $1`,
	},
}

// jobHeldSQL finds the job if the worker holds it at the attempt.
const jobHeldSQL = `SELECT 1 FROM jobs WHERE id = $1 AND state = 'running' AND worker = $2 AND attempt = $3`

var (
	anyArg = regexp.MustCompile(`= ANY\(\$(\d+)\)`)
	arg    = regexp.MustCompile(`\$(\d+)`)
)

// Shared returns d with each statement it leaves empty filled from the
// statements both dialects run alike, rewritten with d.AnyOf and d.Arg. A
// backend calls it once, when its package is initialised: a transaction
// pays nothing for it.
func Shared(d Dialect) Dialect {
	fill(reflect.ValueOf(&d).Elem(), reflect.ValueOf(&shared).Elem(), &d)
	return d
}

// fill sets the empty string fields of dst (in embedded structs too) to
// the rewritten fields of src.
func fill(dst, src reflect.Value, d *Dialect) {
	for i := range dst.NumField() {
		f, s := dst.Field(i), src.Field(i)
		switch {
		case f.Kind() == reflect.Struct:
			fill(f, s, d)
		case f.Kind() == reflect.String && f.String() == "" && s.String() != "":
			f.SetString(d.Rebind(s.String()))
		}
	}
}

// Rebind rewrites a statement written with PostgreSQL's placeholders for
// d: each = ANY($n) with d.AnyOf(n), then each $n with d.Arg(n).
func (d *Dialect) Rebind(stmt string) string {
	stmt = anyArg.ReplaceAllStringFunc(stmt, func(m string) string {
		n, _ := strconv.Atoi(anyArg.FindStringSubmatch(m)[1])
		return d.AnyOf(n)
	})
	return arg.ReplaceAllStringFunc(stmt, func(m string) string {
		n, _ := strconv.Atoi(m[1:])
		return d.Arg(n)
	})
}
