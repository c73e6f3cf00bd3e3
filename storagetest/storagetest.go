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

// Run runs the whole suite against the backend that open creates.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(*testing.T, Opener)
	}{
		{"CreateAndFind", testCreateAndFind},
		{"CreateValidation", testCreateValidation},
		{"UpdateReplaceAndPatch", testUpdate},
		{"IfMatch", testIfMatch},
		{"Delete", testDelete},
		{"Members", testMembers},
		{"MembersCycle", testMembersCycle},
		{"ListResources", testListResources},
		{"Order", testOrder},
		{"Files", testFiles},
		{"ChildFiles", testChildFiles},
		{"FindResources", testFindResources},
		{"Groups", testGroups},
		{"GroupsFormerKey", testGroupsFormerKey},
		{"GroupsStoreAnyway", testGroupsStoreAnyway},
		{"SequenceNumbers", testSequence},
		{"ConcurrentMint", testConcurrentMint},
		{"GroupCommit", testGroupCommit},
		{"CostMembership", testCostMembership},
		{"CostPages", testCostPages},
		{"CostEdit", testCostEdit},
		{"OAIRecords", testOAIRecords},
		{"OAISets", testOAISets},
		{"Counters", testCounters},
		{"Changes", testChanges},
		{"CostOAI", testCostOAI},
		{"Search", testSearch},
		{"SearchPaging", testSearchPaging},
		{"SearchIndexer", testSearchIndexer},
		{"CostSearch", testCostSearch},
		{"SearchThreshold", testSearchThreshold},
		{"SearchWindows", testSearchWindows},
		{"CostSearchFirstPage", testCostSearchFirstPage},
		{"SearchBrowse", testSearchBrowse},
		{"CostSearchBrowse", testCostSearchBrowse},
		{"JobsEnqueued", testJobsEnqueued},
		{"JobsClaim", testJobsClaim},
		{"JobsFinish", testJobsFinish},
		{"JobsRetry", testJobsRetry},
		{"AccessVisibility", testAccessVisibility},
		{"AccessDates", testAccessDates},
		{"AccessRoles", testAccessRoles},
		{"CostAccess", testCostAccess},
		{"AccessPageText", testAccessPageText},
		{"EffectiveAccess", testEffectiveAccess},
		{"AccessRelations", testAccessRelations},
		{"SearchHiddenCollection", testSearchHiddenCollection},
		{"AuditRedacted", testAuditRedacted},
		{"GroupSourceKeyRefused", testGroupSourceKeyRefused},
		{"CostEffectiveAccess", testCostEffectiveAccess},
		{"AccessHiddenCursor", testAccessHiddenCursor},
		{"AccountUsers", testAccountUsers},
		{"AccountTokens", testAccountTokens},
		{"AccountGrants", testAccountGrants},
		{"AccountAudit", testAccountAudit},
		{"AccountSettings", testAccountSettings},
		{"Lease", testLease},
		{"SearchLease", testSearchLease},
		{"BlobReferences", testBlobReferences},
		{"IDCodec", testIDCodec},
		{"WebIntern", testWebIntern},
		{"WebInternConcurrent", testWebInternConcurrent},
		{"WebFiles", testWebFiles},
		{"WebCaptures", testWebCaptures},
		{"WebLinks", testWebLinks},
		{"CostWeb", testCostWeb},
		{"WebExact", testWebExact},
		{"WebConcurrentIngest", testWebConcurrentIngest},
		{"WebBatchOnce", testWebBatchOnce},
		{"WebCaptureTarget", testWebCaptureTarget},
		{"AuthFailures", testAuthFailures},
		{"Uploads", testUploads},
		{"UploadRights", testUploadRights},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open) })
	}
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
