// Package storagetest is the conformance suite every shelfmark.Storage
// backend passes. It drives the real repository engine over the backend
// (no mocks) and checks behaviour, and, through the backend's statement
// tracer, that the work of an operation does not grow with the size of what
// surrounds it (rules R1–R3).
package storagetest

import (
	"strings"
	"sync"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// Opener opens a fresh, empty Storage for one test, reporting every
// statement to tracer. The suite closes it.
type Opener func(t *testing.T, tracer shelfmark.StatementTracer) shelfmark.Storage

// Run runs the whole suite against the backend that open creates. Its
// tests run in parallel (up to go test's -parallel at once), each on a
// store of its own.
func Run(t *testing.T, open Opener) {
	run(t, open, false)
}

// RunBulk runs the tests whose writes reach the bulk inserts (of
// resources, fields, memberships, files, source keys, OAI-PMH records, web
// captures and web links) with batches of two rows or more. A backend that
// sends large batches another way (PostgreSQL's COPY) runs them with its
// threshold lowered to two rows, so that the suite covers that path too
// without running again the tests that never reach it.
func RunBulk(t *testing.T, open Opener) {
	run(t, open, true)
}

func run(t *testing.T, open Opener, bulkOnly bool) {
	for _, tc := range conformance {
		if bulkOnly && !tc.bulk {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open)
		})
	}
}

// conformance is the suite: each test's name, its function, and whether
// its writes reach the bulk inserts with batches of two rows or more (see
// RunBulk).
var conformance = []struct {
	name string
	fn   func(*testing.T, Opener)
	bulk bool
}{
	{"CreateAndFind", testCreateAndFind, true},
	{"CreateValidation", testCreateValidation, true},
	{"UpdateReplaceAndPatch", testUpdate, true},
	{"IfMatch", testIfMatch, false},
	{"Delete", testDelete, true},
	{"Members", testMembers, true},
	{"MembersCycle", testMembersCycle, false},
	{"ListResources", testListResources, true},
	{"ResourceChain", testResourceChain, true},
	{"Order", testOrder, false},
	{"PageLabels", testPageLabels, true},
	{"ReplacePageFile", testReplacePageFile, false},
	{"ThumbnailPage", testThumbnailPage, false},
	{"Files", testFiles, false},
	{"ChildFiles", testChildFiles, true},
	{"ChildFilesBound", testChildFilesBound, false},
	{"CommitJobsObserved", testCommitJobsObserved, false},
	{"ListPages", testListPages, false},
	{"FirstChildren", testFirstChildren, false},
	{"OwnedAndMembersBefore", testOwnedAndMembersBefore, false},
	{"Workspace", testWorkspace, false},
	{"ChangeWorks", testChangeWorks, false},
	{"BatchEdit", testBatchEdit, false},
	{"UsageStore", testUsageStore, false},
	{"UsageCounter", testUsageCounter, false},
	{"FindResources", testFindResources, false},
	{"Groups", testGroups, true},
	{"GroupsFormerKey", testGroupsFormerKey, true},
	{"GroupsStoreAnyway", testGroupsStoreAnyway, true},
	{"SequenceNumbers", testSequence, true},
	{"ConcurrentMint", testConcurrentMint, false},
	{"GroupCommit", testGroupCommit, true},
	{"CostMembership", testCostMembership, true},
	{"CostPages", testCostPages, false},
	{"CostEdit", testCostEdit, true},
	{"OAIRecords", testOAIRecords, true},
	{"OAISets", testOAISets, false},
	{"Counters", testCounters, false},
	{"Changes", testChanges, true},
	{"CostOAI", testCostOAI, true},
	{"Search", testSearch, true},
	{"SearchPaging", testSearchPaging, false},
	{"SearchIndexer", testSearchIndexer, true},
	{"CostSearch", testCostSearch, false},
	{"SearchThreshold", testSearchThreshold, false},
	{"SearchWindows", testSearchWindows, false},
	{"CostSearchFirstPage", testCostSearchFirstPage, false},
	{"SearchBrowse", testSearchBrowse, true},
	{"CostSearchBrowse", testCostSearchBrowse, true},
	{"JobsEnqueued", testJobsEnqueued, true},
	{"JobsClaim", testJobsClaim, false},
	{"JobsFinish", testJobsFinish, false},
	{"JobsRetry", testJobsRetry, false},
	{"JobsRenew", testJobsRenew, false},
	{"AccessVisibility", testAccessVisibility, false},
	{"AccessDates", testAccessDates, false},
	{"AccessRoles", testAccessRoles, false},
	{"FilesAccess", testFilesAccess, false},
	{"AccessRequests", testAccessRequests, false},
	{"CollectionFilesDefault", testCollectionFilesDefault, false},
	{"CostFilesAccess", testCostFilesAccess, false},
	{"CostAccess", testCostAccess, false},
	{"CostMembers", testCostMembers, false},
	{"AccessPageText", testAccessPageText, false},
	{"EffectiveAccess", testEffectiveAccess, true},
	{"AccessRelations", testAccessRelations, false},
	{"SearchHiddenCollection", testSearchHiddenCollection, false},
	{"SearchReader", testSearchReader, false},
	{"SearchSortNewest", testSearchSortNewest, false},
	{"SearchGroups", testSearchGroups, false},
	{"SearchGroupWindows", testSearchGroupWindows, false},
	{"SearchFields", testSearchFields, false},
	{"SearchFieldWindows", testSearchFieldWindows, false},
	{"SearchFacets", testSearchFacets, true},
	{"SearchLanguages", testSearchLanguages, false},
	{"AuditRedacted", testAuditRedacted, false},
	{"GroupSourceKeyRefused", testGroupSourceKeyRefused, false},
	{"CostEffectiveAccess", testCostEffectiveAccess, true},
	{"AccessHiddenCursor", testAccessHiddenCursor, false},
	{"AccountUsers", testAccountUsers, false},
	{"AccountTokens", testAccountTokens, false},
	{"AccountGrants", testAccountGrants, false},
	{"AccountAudit", testAccountAudit, false},
	{"AccountSettings", testAccountSettings, false},
	{"Lease", testLease, true},
	{"SearchLease", testSearchLease, true},
	{"BlobReferences", testBlobReferences, false},
	{"IDCodec", testIDCodec, false},
	{"WebIntern", testWebIntern, false},
	{"WebInternConcurrent", testWebInternConcurrent, false},
	{"WebFiles", testWebFiles, false},
	{"WebCaptures", testWebCaptures, true},
	{"WebLinks", testWebLinks, true},
	{"WebURLView", testWebURLView, false},
	{"CostWebLinks", testCostWebLinks, false},
	{"CostWeb", testCostWeb, true},
	{"WebLinkLog", testWebLinkLog, false},
	{"WebMerge", testWebMerge, true},
	{"WebMergeTrails", testWebMergeTrails, true},
	{"WebExact", testWebExact, true},
	{"WebConcurrentIngest", testWebConcurrentIngest, true},
	{"WebBatchOnce", testWebBatchOnce, true},
	{"WebCaptureTarget", testWebCaptureTarget, true},
	{"AuthFailures", testAuthFailures, false},
	{"BulkWrites", testBulkWrites, true},
	{"Uploads", testUploads, false},
	{"UploadRights", testUploadRights, false},
	{"Purge", testPurge, false},
	{"PreservationEvents", testPreservationEvents, false},
	{"SourceKeysOf", testSourceKeysOf, true},
	{"Rebuild", testRebuild, true},
	{"PreserveBuildAll", testPreserveBuildAll, false},
	{"RebuildDamaged", testRebuildDamaged, false},
}

// recorder collects traced statements while enabled.
type recorder struct {
	mu    sync.Mutex
	on    bool
	calls []call
}

type call struct {
	query string
	rows  int64
}

func (r *recorder) trace(query string, rows int64) {
	r.mu.Lock()
	if r.on {
		r.calls = append(r.calls, call{normalize(query), rows})
	}
	r.mu.Unlock()
}

// capture runs fn and returns the statements it ran.
func (r *recorder) capture(fn func()) []call {
	r.mu.Lock()
	r.on, r.calls = true, nil
	r.mu.Unlock()
	fn()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false
	return r.calls
}

func normalize(q string) string { return strings.Join(strings.Fields(q), " ") }

// env is one test's repository over a fresh backend.
type env struct {
	store shelfmark.Storage
	repo  *shelfmark.Repository
	rec   *recorder
}

func newEnv(t *testing.T, open Opener, opts shelfmark.RepositoryOptions) *env {
	t.Helper()
	rec := &recorder{}
	store := open(t, rec.trace)
	repo := shelfmark.NewRepository(store, opts)
	t.Cleanup(func() {
		repo.Close()
		store.Close()
	})
	return &env{store: store, repo: repo, rec: rec}
}
