package shelfmark

import (
	"context"
	"time"
)

// Every method of WriteTx that the buffer neither holds back nor answers
// (buffer.go) writes what the buffer holds first, then runs on the
// transaction: it may read or change rows of the batch's earlier
// operations. A flush with nothing held costs nothing.

// flushed runs fn after writing what the buffer holds.
func flushed[T any](ctx context.Context, b *bufferedTx, fn func() (T, error)) (T, error) {
	if err := b.flush(ctx); err != nil {
		var zero T
		return zero, err
	}
	return fn()
}

// flushed runs fn after writing what the buffer holds.
func (b *bufferedTx) flushed(ctx context.Context, fn func() error) error {
	if err := b.flush(ctx); err != nil {
		return err
	}
	return fn()
}

// ReadTx.

func (b *bufferedTx) FirstChildren(ctx context.Context, parents []int64, kind Kind) (map[int64]int64, error) {
	return flushed(ctx, b, func() (map[int64]int64, error) { return b.tx.FirstChildren(ctx, parents, kind) })
}

func (b *bufferedTx) PageFiles(ctx context.Context, parents []int64, perParent int, buf *FileRowBuffer) ([]*FileRow, error) {
	return flushed(ctx, b, func() ([]*FileRow, error) { return b.tx.PageFiles(ctx, parents, perParent, buf) })
}

func (b *bufferedTx) ChildFiles(ctx context.Context, parents []int64, perParent int) ([]*FileRow, error) {
	return flushed(ctx, b, func() ([]*FileRow, error) { return b.tx.ChildFiles(ctx, parents, perParent) })
}

func (b *bufferedTx) Children(ctx context.Context, parent, after int64, limit int) ([]*ResourceRow, error) {
	return flushed(ctx, b, func() ([]*ResourceRow, error) { return b.tx.Children(ctx, parent, after, limit) })
}

func (b *bufferedTx) Fields(ctx context.Context, key int64, predicates ...string) ([]Field, error) {
	return flushed(ctx, b, func() ([]Field, error) { return b.tx.Fields(ctx, key, predicates...) })
}

func (b *bufferedTx) File(ctx context.Context, key int64) (*File, error) {
	return flushed(ctx, b, func() (*File, error) { return b.tx.File(ctx, key) })
}

func (b *bufferedTx) MemberOf(ctx context.Context, key int64) ([]int64, error) {
	return flushed(ctx, b, func() ([]int64, error) { return b.tx.MemberOf(ctx, key) })
}

// SourceKeysOf reads source keys, which may be held back.
func (b *bufferedTx) SourceKeysOf(ctx context.Context, keys []int64) (map[int64][]string, error) {
	return flushed(ctx, b, func() (map[int64][]string, error) { return b.tx.SourceKeysOf(ctx, keys) })
}

func (b *bufferedTx) Members(ctx context.Context, collection, after int64, limit int) ([]*ResourceRow, error) {
	return flushed(ctx, b, func() ([]*ResourceRow, error) { return b.tx.Members(ctx, collection, after, limit) })
}

// MembersBefore reads memberships, which may be held back.
func (b *bufferedTx) MembersBefore(ctx context.Context, collection, before int64, limit int) ([]*ResourceRow, error) {
	return flushed(ctx, b, func() ([]*ResourceRow, error) { return b.tx.MembersBefore(ctx, collection, before, limit) })
}

// Owned reads owners and rows, which may be held back.
func (b *bufferedTx) Owned(ctx context.Context, user int64, kind Kind, before int64, limit int) ([]*ResourceRow, error) {
	return flushed(ctx, b, func() ([]*ResourceRow, error) { return b.tx.Owned(ctx, user, kind, before, limit) })
}

// AccessDependents reads children and derivatives, which may be held back.
func (b *bufferedTx) AccessDependents(ctx context.Context, keys []int64) ([]*ResourceRow, error) {
	return flushed(ctx, b, func() ([]*ResourceRow, error) { return b.tx.AccessDependents(ctx, keys) })
}

// FilesHolding reads files, which may be held back.
func (b *bufferedTx) FilesHolding(ctx context.Context, sha string, limit int) ([]HeldFile, error) {
	return flushed(ctx, b, func() ([]HeldFile, error) { return b.tx.FilesHolding(ctx, sha, limit) })
}

func (b *bufferedTx) Roots(ctx context.Context, kind Kind, before int64, limit int) ([]*ResourceRow, error) {
	return flushed(ctx, b, func() ([]*ResourceRow, error) { return b.tx.Roots(ctx, kind, before, limit) })
}

// OAIReadTx.

func (b *bufferedTx) Counter(ctx context.Context, name string) (int64, error) {
	return flushed(ctx, b, func() (int64, error) { return b.tx.Counter(ctx, name) })
}

func (b *bufferedTx) OAIBounds(ctx context.Context) (int64, time.Time, bool, error) {
	if err := b.flush(ctx); err != nil {
		return 0, time.Time{}, false, err
	}
	return b.tx.OAIBounds(ctx)
}

func (b *bufferedTx) OAICount(ctx context.Context, prefix string, set int64) (OAITally, error) {
	return flushed(ctx, b, func() (OAITally, error) { return b.tx.OAICount(ctx, prefix, set) })
}

func (b *bufferedTx) OAIRecord(ctx context.Context, prefix string, key int64) (*OAIRecord, error) {
	return flushed(ctx, b, func() (*OAIRecord, error) { return b.tx.OAIRecord(ctx, prefix, key) })
}

func (b *bufferedTx) OAIRecords(ctx context.Context, l OAIList) ([]*OAIRecord, error) {
	return flushed(ctx, b, func() ([]*OAIRecord, error) { return b.tx.OAIRecords(ctx, l) })
}

func (b *bufferedTx) OAIRecordsOf(ctx context.Context, keys []int64) ([]*OAIRecord, error) {
	return flushed(ctx, b, func() ([]*OAIRecord, error) { return b.tx.OAIRecordsOf(ctx, keys) })
}

func (b *bufferedTx) OAISeqRange(ctx context.Context, prefix string, from, until time.Time) (int64, int64, error) {
	if err := b.flush(ctx); err != nil {
		return 0, 0, err
	}
	return b.tx.OAISeqRange(ctx, prefix, from, until)
}

func (b *bufferedTx) OAISetTree(ctx context.Context, spec string) ([]int64, error) {
	return flushed(ctx, b, func() ([]int64, error) { return b.tx.OAISetTree(ctx, spec) })
}

func (b *bufferedTx) OAISets(ctx context.Context, after int64, limit int) ([]OAISet, error) {
	return flushed(ctx, b, func() ([]OAISet, error) { return b.tx.OAISets(ctx, after, limit) })
}

func (b *bufferedTx) OAISetsByKey(ctx context.Context, keys []int64) ([]OAISet, error) {
	return flushed(ctx, b, func() ([]OAISet, error) { return b.tx.OAISetsByKey(ctx, keys) })
}

// ChangeReadTx.

func (b *bufferedTx) Changes(ctx context.Context, after int64, limit int) ([]*ResourceRow, error) {
	return flushed(ctx, b, func() ([]*ResourceRow, error) { return b.tx.Changes(ctx, after, limit) })
}

func (b *bufferedTx) AccessEnds(ctx context.Context, after, until time.Time) ([]int64, error) {
	return flushed(ctx, b, func() ([]int64, error) { return b.tx.AccessEnds(ctx, after, until) })
}

func (b *bufferedTx) FieldsOf(ctx context.Context, keys []int64) (map[int64][]Field, error) {
	return flushed(ctx, b, func() (map[int64][]Field, error) { return b.tx.FieldsOf(ctx, keys) })
}

func (b *bufferedTx) FilesOfWorks(ctx context.Context, works []int64, use string, now time.Time) (map[int64][]*File, error) {
	return flushed(ctx, b, func() (map[int64][]*File, error) { return b.tx.FilesOfWorks(ctx, works, use, now) })
}

// JobReadTx.

func (b *bufferedTx) Jobs(ctx context.Context, f JobFilter) ([]*Job, error) {
	return flushed(ctx, b, func() ([]*Job, error) { return b.tx.Jobs(ctx, f) })
}

func (b *bufferedTx) QueueCounts(ctx context.Context, now time.Time) ([]QueueCount, error) {
	return flushed(ctx, b, func() ([]QueueCount, error) { return b.tx.QueueCounts(ctx, now) })
}

// SearchReadTx.

func (b *bufferedTx) Search(ctx context.Context, q SearchQuery) (*SearchResult, error) {
	return flushed(ctx, b, func() (*SearchResult, error) { return b.tx.Search(ctx, q) })
}

func (b *bufferedTx) SearchDoc(ctx context.Context, key int64) (*SearchDoc, error) {
	return flushed(ctx, b, func() (*SearchDoc, error) { return b.tx.SearchDoc(ctx, key) })
}

// AccountReadTx.

func (b *bufferedTx) AccessDue(ctx context.Context, now time.Time, limit int) ([]*ResourceRow, error) {
	return flushed(ctx, b, func() ([]*ResourceRow, error) { return b.tx.AccessDue(ctx, now, limit) })
}

func (b *bufferedTx) Audit(ctx context.Context, q AuditQuery) ([]*AuditEntry, error) {
	return flushed(ctx, b, func() ([]*AuditEntry, error) { return b.tx.Audit(ctx, q) })
}

func (b *bufferedTx) GrantsOn(ctx context.Context, resources []int64) ([]Grant, error) {
	return flushed(ctx, b, func() ([]Grant, error) { return b.tx.GrantsOn(ctx, resources) })
}

func (b *bufferedTx) Setting(ctx context.Context, name string) (string, bool, error) {
	if err := b.flush(ctx); err != nil {
		return "", false, err
	}
	return b.tx.Setting(ctx, name)
}

func (b *bufferedTx) TokenByHash(ctx context.Context, hash []byte) (*Token, error) {
	return flushed(ctx, b, func() (*Token, error) { return b.tx.TokenByHash(ctx, hash) })
}

func (b *bufferedTx) Tokens(ctx context.Context, user int64, kind TokenKind) ([]*Token, error) {
	return flushed(ctx, b, func() ([]*Token, error) { return b.tx.Tokens(ctx, user, kind) })
}

func (b *bufferedTx) UserByKey(ctx context.Context, key int64) (*User, error) {
	return flushed(ctx, b, func() (*User, error) { return b.tx.UserByKey(ctx, key) })
}

func (b *bufferedTx) UserByName(ctx context.Context, name string) (*User, error) {
	return flushed(ctx, b, func() (*User, error) { return b.tx.UserByName(ctx, name) })
}

func (b *bufferedTx) Users(ctx context.Context, after int64, limit int) ([]*User, error) {
	return flushed(ctx, b, func() ([]*User, error) { return b.tx.Users(ctx, after, limit) })
}

// WebReadTx.

func (b *bufferedTx) WebCaptureRows(ctx context.Context, ids []int64) ([]*CaptureRow, error) {
	return flushed(ctx, b, func() ([]*CaptureRow, error) { return b.tx.WebCaptureRows(ctx, ids) })
}

func (b *bufferedTx) WebCaptures(ctx context.Context, q CaptureScan) ([]*CaptureRow, error) {
	return flushed(ctx, b, func() ([]*CaptureRow, error) { return b.tx.WebCaptures(ctx, q) })
}

func (b *bufferedTx) WebDomainRows(ctx context.Context, ids []int64) ([]*WebDomainRow, error) {
	return flushed(ctx, b, func() ([]*WebDomainRow, error) { return b.tx.WebDomainRows(ctx, ids) })
}

func (b *bufferedTx) WebFile(ctx context.Context, file int64) (*WebFileRow, error) {
	return flushed(ctx, b, func() (*WebFileRow, error) { return b.tx.WebFile(ctx, file) })
}

func (b *bufferedTx) WebFileCaptures(ctx context.Context, file, after int64, limit int) ([]*CaptureRow, error) {
	return flushed(ctx, b, func() ([]*CaptureRow, error) { return b.tx.WebFileCaptures(ctx, file, after, limit) })
}

func (b *bufferedTx) WebFiles(ctx context.Context, after int64, limit int) ([]*WebFileRow, error) {
	return flushed(ctx, b, func() ([]*WebFileRow, error) { return b.tx.WebFiles(ctx, after, limit) })
}

func (b *bufferedTx) WebInbound(ctx context.Context, dst, after int64, limit int) ([]*WebURLRow, error) {
	return flushed(ctx, b, func() ([]*WebURLRow, error) { return b.tx.WebInbound(ctx, dst, after, limit) })
}

func (b *bufferedTx) WebLinkRows(ctx context.Context, q WebLinkRowsQuery) (*WebLinkRows, error) {
	return flushed(ctx, b, func() (*WebLinkRows, error) { return b.tx.WebLinkRows(ctx, q) })
}

func (b *bufferedTx) WebURLView(ctx context.Context, surt string) (*WebURLView, error) {
	return flushed(ctx, b, func() (*WebURLView, error) { return b.tx.WebURLView(ctx, surt) })
}

func (b *bufferedTx) WebLinkLogged(ctx context.Context) (bool, error) {
	return flushed(ctx, b, func() (bool, error) { return b.tx.WebLinkLogged(ctx) })
}

func (b *bufferedTx) WebTopDomains(ctx context.Context, n int) ([]*WebDomainRow, error) {
	return flushed(ctx, b, func() ([]*WebDomainRow, error) { return b.tx.WebTopDomains(ctx, n) })
}

func (b *bufferedTx) WebTopURLs(ctx context.Context, domain string, n int) ([]*WebURLRow, error) {
	return flushed(ctx, b, func() ([]*WebURLRow, error) { return b.tx.WebTopURLs(ctx, domain, n) })
}

func (b *bufferedTx) WebURLCaptures(ctx context.Context, url int64, at time.Time, id int64, desc bool, limit int) ([]*CaptureRow, error) {
	return flushed(ctx, b, func() ([]*CaptureRow, error) { return b.tx.WebURLCaptures(ctx, url, at, id, desc, limit) })
}

func (b *bufferedTx) WebURLRows(ctx context.Context, ids []int64) ([]*WebURLRow, error) {
	return flushed(ctx, b, func() ([]*WebURLRow, error) { return b.tx.WebURLRows(ctx, ids) })
}

func (b *bufferedTx) WebURLsBySURT(ctx context.Context, surts []string) (map[string]*WebURLRow, error) {
	return flushed(ctx, b, func() (map[string]*WebURLRow, error) { return b.tx.WebURLsBySURT(ctx, surts) })
}

// WriteTx.

func (b *bufferedTx) DeleteMemberships(ctx context.Context, ms []Membership) error {
	return b.flushed(ctx, func() error { return b.tx.DeleteMemberships(ctx, ms) })
}

func (b *bufferedTx) NextSeq(ctx context.Context, n int) (int64, error) {
	return flushed(ctx, b, func() (int64, error) { return b.tx.NextSeq(ctx, n) })
}

func (b *bufferedTx) SetPositions(ctx context.Context, parent int64, children []int64) error {
	return b.flushed(ctx, func() error { return b.tx.SetPositions(ctx, parent, children) })
}

// PurgeTree flushes first: it removes rows the buffer may hold.
func (b *bufferedTx) PurgeTree(ctx context.Context, key int64, limit int) (*Purged, error) {
	return flushed(ctx, b, func() (*Purged, error) { return b.tx.PurgeTree(ctx, key, limit) })
}

func (b *bufferedTx) Tombstone(ctx context.Context, key, seq int64, at time.Time) (int64, error) {
	return flushed(ctx, b, func() (int64, error) { return b.tx.Tombstone(ctx, key, seq, at) })
}

func (b *bufferedTx) UpdateResource(ctx context.Context, row *ResourceRow) error {
	return b.flushed(ctx, func() error { return b.tx.UpdateResource(ctx, row) })
}

// OAIWriteTx.

func (b *bufferedTx) AddCounter(ctx context.Context, name string, delta int64) (int64, error) {
	return flushed(ctx, b, func() (int64, error) { return b.tx.AddCounter(ctx, name, delta) })
}

func (b *bufferedTx) DeleteOAISets(ctx context.Context, keys []int64) error {
	return b.flushed(ctx, func() error { return b.tx.DeleteOAISets(ctx, keys) })
}

func (b *bufferedTx) PutOAIRecords(ctx context.Context, recs []*OAIRecord) error {
	return b.flushed(ctx, func() error { return b.tx.PutOAIRecords(ctx, recs) })
}

func (b *bufferedTx) PutOAISets(ctx context.Context, sets []OAISet) error {
	return b.flushed(ctx, func() error { return b.tx.PutOAISets(ctx, sets) })
}

// JobWriteTx.

func (b *bufferedTx) ClaimJobs(ctx context.Context, c Claim) ([]*Job, error) {
	return flushed(ctx, b, func() ([]*Job, error) { return b.tx.ClaimJobs(ctx, c) })
}

func (b *bufferedTx) FailJob(ctx context.Context, id int64, msg string) error {
	return b.flushed(ctx, func() error { return b.tx.FailJob(ctx, id, msg) })
}

func (b *bufferedTx) RenewJobs(ctx context.Context, worker string, ids []int64, lease time.Time) (int64, error) {
	return flushed(ctx, b, func() (int64, error) { return b.tx.RenewJobs(ctx, worker, ids, lease) })
}

func (b *bufferedTx) ReapJobs(ctx context.Context, now time.Time, maxAttempts map[string]int) (int64, error) {
	return flushed(ctx, b, func() (int64, error) { return b.tx.ReapJobs(ctx, now, maxAttempts) })
}

func (b *bufferedTx) RequeueJob(ctx context.Context, id int64, runAt time.Time, msg string) error {
	return b.flushed(ctx, func() error { return b.tx.RequeueJob(ctx, id, runAt, msg) })
}

func (b *bufferedTx) RetryJobs(ctx context.Context, queue string, ids []int64, now time.Time) (int64, error) {
	return flushed(ctx, b, func() (int64, error) { return b.tx.RetryJobs(ctx, queue, ids, now) })
}

func (b *bufferedTx) SetQueuePaused(ctx context.Context, queue string, paused bool) error {
	return b.flushed(ctx, func() error { return b.tx.SetQueuePaused(ctx, queue, paused) })
}

// SearchWriteTx.

func (b *bufferedTx) DeleteSearchDocs(ctx context.Context, keys []int64) error {
	return b.flushed(ctx, func() error { return b.tx.DeleteSearchDocs(ctx, keys) })
}

func (b *bufferedTx) PutSearchDocs(ctx context.Context, docs []SearchDoc) error {
	return b.flushed(ctx, func() error { return b.tx.PutSearchDocs(ctx, docs) })
}

// AccountWriteTx.

func (b *bufferedTx) InitSetting(ctx context.Context, name, value string) (string, error) {
	return flushed(ctx, b, func() (string, error) { return b.tx.InitSetting(ctx, name, value) })
}

func (b *bufferedTx) InsertAudit(ctx context.Context, entries []*AuditEntry) error {
	return b.flushed(ctx, func() error { return b.tx.InsertAudit(ctx, entries) })
}

func (b *bufferedTx) InsertToken(ctx context.Context, t *Token) error {
	return b.flushed(ctx, func() error { return b.tx.InsertToken(ctx, t) })
}

func (b *bufferedTx) InsertUser(ctx context.Context, u *User) error {
	return b.flushed(ctx, func() error { return b.tx.InsertUser(ctx, u) })
}

func (b *bufferedTx) PruneGrants(ctx context.Context, before time.Time, limit int) ([]Grant, error) {
	return flushed(ctx, b, func() ([]Grant, error) { return b.tx.PruneGrants(ctx, before, limit) })
}

func (b *bufferedTx) RevokeToken(ctx context.Context, user, key int64, at time.Time) (bool, error) {
	return flushed(ctx, b, func() (bool, error) { return b.tx.RevokeToken(ctx, user, key, at) })
}

func (b *bufferedTx) SetGrants(ctx context.Context, resource int64, grants []Grant) error {
	return b.flushed(ctx, func() error { return b.tx.SetGrants(ctx, resource, grants) })
}

func (b *bufferedTx) SetUserGroups(ctx context.Context, user int64, groups []string) error {
	return b.flushed(ctx, func() error { return b.tx.SetUserGroups(ctx, user, groups) })
}

func (b *bufferedTx) UpdateUser(ctx context.Context, u *User) error {
	return b.flushed(ctx, func() error { return b.tx.UpdateUser(ctx, u) })
}

// WebWriteTx.

func (b *bufferedTx) AddWebCounts(ctx context.Context, urlInbound, domainInbound, domainURLs map[int64]int64) error {
	return b.flushed(ctx, func() error { return b.tx.AddWebCounts(ctx, urlInbound, domainInbound, domainURLs) })
}

func (b *bufferedTx) AddWebInbound(ctx context.Context, urlInbound map[int64]int64) error {
	return b.flushed(ctx, func() error { return b.tx.AddWebInbound(ctx, urlInbound) })
}

func (b *bufferedTx) LogWebLinks(ctx context.Context, changes []WebLinkChange) error {
	return b.flushed(ctx, func() error { return b.tx.LogWebLinks(ctx, changes) })
}

func (b *bufferedTx) TakeWebLinkLog(ctx context.Context, from, to WebLink) ([]WebLinkChange, error) {
	return flushed(ctx, b, func() ([]WebLinkChange, error) { return b.tx.TakeWebLinkLog(ctx, from, to) })
}

func (b *bufferedTx) WebLinkLogAt(ctx context.Context, from WebLink, skip int) (WebLink, bool, error) {
	var at WebLink
	var ok bool
	err := b.flushed(ctx, func() (err error) { at, ok, err = b.tx.WebLinkLogAt(ctx, from, skip); return err })
	return at, ok, err
}

func (b *bufferedTx) LockWebMerge(ctx context.Context) error {
	return b.flushed(ctx, func() error { return b.tx.LockWebMerge(ctx) })
}

func (b *bufferedTx) AddWebLinks(ctx context.Context, links []WebLink) error {
	return b.flushed(ctx, func() error { return b.tx.AddWebLinks(ctx, links) })
}

func (b *bufferedTx) DeleteWebCaptures(ctx context.Context, ids []int64) error {
	return b.flushed(ctx, func() error { return b.tx.DeleteWebCaptures(ctx, ids) })
}

func (b *bufferedTx) DeleteWebLinks(ctx context.Context, links []WebLink) error {
	return b.flushed(ctx, func() error { return b.tx.DeleteWebLinks(ctx, links) })
}

func (b *bufferedTx) InsertWebCaptures(ctx context.Context, rows []*CaptureRow) error {
	return b.flushed(ctx, func() error { return b.tx.InsertWebCaptures(ctx, rows) })
}

func (b *bufferedTx) InternWebDomains(ctx context.Context, rows []*WebDomainRow) error {
	return b.flushed(ctx, func() error { return b.tx.InternWebDomains(ctx, rows) })
}

func (b *bufferedTx) InternWebURLs(ctx context.Context, rows []*WebURLRow) error {
	return b.flushed(ctx, func() error { return b.tx.InternWebURLs(ctx, rows) })
}

func (b *bufferedTx) LockWebFile(ctx context.Context, file int64) (*WebFileRow, error) {
	return flushed(ctx, b, func() (*WebFileRow, error) { return b.tx.LockWebFile(ctx, file) })
}

func (b *bufferedTx) LockWebURLs(ctx context.Context, ids []int64) ([]*WebURLRow, error) {
	return flushed(ctx, b, func() ([]*WebURLRow, error) { return b.tx.LockWebURLs(ctx, ids) })
}

func (b *bufferedTx) PutWebFile(ctx context.Context, row *WebFileRow) error {
	return b.flushed(ctx, func() error { return b.tx.PutWebFile(ctx, row) })
}

func (b *bufferedTx) SetWebCurrent(ctx context.Context, current map[int64]int64) error {
	return b.flushed(ctx, func() error { return b.tx.SetWebCurrent(ctx, current) })
}

// UploadWriteTx.

func (b *bufferedTx) Uploads(ctx context.Context, user int64, shas []string) (map[string]Upload, error) {
	return flushed(ctx, b, func() (map[string]Upload, error) { return b.tx.Uploads(ctx, user, shas) })
}

func (b *bufferedTx) UploadUsage(ctx context.Context, user int64) (UploadUsage, error) {
	return flushed(ctx, b, func() (UploadUsage, error) { return b.tx.UploadUsage(ctx, user) })
}

func (b *bufferedTx) PutUpload(ctx context.Context, u Upload) error {
	return b.flushed(ctx, func() error { return b.tx.PutUpload(ctx, u) })
}

func (b *bufferedTx) DeleteUploads(ctx context.Context, user int64, shas []string) (int, error) {
	return flushed(ctx, b, func() (int, error) { return b.tx.DeleteUploads(ctx, user, shas) })
}

func (b *bufferedTx) ReleaseUploads(ctx context.Context, user int64, shas []string) (int, error) {
	return flushed(ctx, b, func() (int, error) { return b.tx.ReleaseUploads(ctx, user, shas) })
}

func (b *bufferedTx) PruneUploads(ctx context.Context, before time.Time, limit int) (int, error) {
	return flushed(ctx, b, func() (int, error) { return b.tx.PruneUploads(ctx, before, limit) })
}

// SetEffectiveAccess writes rows the buffer may hold.
func (b *bufferedTx) SetEffectiveAccess(ctx context.Context, rows []*ResourceRow) error {
	return b.flushed(ctx, func() error { return b.tx.SetEffectiveAccess(ctx, rows) })
}

// SetVersions writes rows the buffer may hold.
func (b *bufferedTx) SetVersions(ctx context.Context, rows []*ResourceRow) error {
	return b.flushed(ctx, func() error { return b.tx.SetVersions(ctx, rows) })
}

func (b *bufferedTx) AccessRequests(ctx context.Context, f AccessRequestFilter) ([]*AccessRequest, error) {
	return flushed(ctx, b, func() ([]*AccessRequest, error) { return b.tx.AccessRequests(ctx, f) })
}

func (b *bufferedTx) AccessRequestByKey(ctx context.Context, key int64) (*AccessRequest, error) {
	return flushed(ctx, b, func() (*AccessRequest, error) { return b.tx.AccessRequestByKey(ctx, key) })
}

func (b *bufferedTx) InsertAccessRequest(ctx context.Context, q *AccessRequest) error {
	return b.flushed(ctx, func() error { return b.tx.InsertAccessRequest(ctx, q) })
}

func (b *bufferedTx) DecideAccessRequest(ctx context.Context, q *AccessRequest) (bool, error) {
	return flushed(ctx, b, func() (bool, error) { return b.tx.DecideAccessRequest(ctx, q) })
}

// SetOwnAccess writes rows the buffer may hold.
func (b *bufferedTx) SetOwnAccess(ctx context.Context, rows []*ResourceRow) error {
	return b.flushed(ctx, func() error { return b.tx.SetOwnAccess(ctx, rows) })
}

func (b *bufferedTx) PutSetting(ctx context.Context, name, value string) error {
	return b.flushed(ctx, func() error { return b.tx.PutSetting(ctx, name, value) })
}
