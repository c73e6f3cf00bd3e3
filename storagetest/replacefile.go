package storagetest

import (
	"context"
	"slices"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// testReplacePageFile: a depositor replaces the original of a page of its
// work with bytes it uploaded (ReplacePageFile): the new file is the
// page's only live file and its characterization is queued, the old
// original and the derivatives made from it are tombstoned (kept as
// tombstones, so the history and harvesters learn of them), the page's
// text leaves search, the upload's record is used, the page and the work
// take a new version, and the audit trail holds the deletions and the
// creation. A page of another work, a stale version, a derivative's use,
// bytes the caller may not name and a caller who may not change the work
// are refused with nothing written.
func testReplacePageFile(t *testing.T, open Opener) {
	e, ctx, sys, coll, dep, other := twoDepositors(t, open)
	book := rs(t)(e.repo.CreateResource(as(dep), &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}}))
	page := rs(t)(e.repo.CreateResource(as(dep), &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: book.ID}))
	second := rs(t)(e.repo.CreateResource(as(dep), &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: book.ID}))
	old := rs(t)(e.repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: page.ID,
		File: &shelfmark.File{Name: "p1.tif", MediaType: "image/tiff", Size: 1, SHA256: sha(81), Use: shelfmark.UseOriginal}}))
	for _, j := range claim(t, e.env, shelfmark.QueueCharacterize, "w", 10, e.now) {
		res := &shelfmark.JobResult{}
		if j.Resource == keyOf(t, old.ID) {
			res.Derivatives = []*shelfmark.File{{Name: "p1.thumbnail.jpg", MediaType: "image/jpeg", Size: 1, SHA256: sha(82), Use: shelfmark.UseThumbnail}}
			res.Docs = []shelfmark.SearchDoc{{Key: keyOf(t, page.ID), Work: keyOf(t, book.ID), Kind: shelfmark.KindFileSet, Body: "weir"}}
		}
		if err := e.repo.FinishJob(sys, j, res); err != nil {
			t.Fatal(err)
		}
	}
	filesOf := func(id shelfmark.ID) []*shelfmark.Resource {
		t.Helper()
		fs, err := e.repo.ChildFiles(sys, book.ID, []shelfmark.ID{id})
		if err != nil {
			t.Fatal(err)
		}
		return fs[id]
	}
	before := filesOf(page.ID)
	if len(before) != 2 {
		t.Fatalf("the page holds %d files before, want the original and its thumbnail", len(before))
	}
	book = rs(t)(e.repo.FindResource(ctx, book.ID))
	if hits := searchFor(t, e, "weir"); len(hits) != 1 {
		t.Fatalf("the page's text before: %d hits, want 1", len(hits))
	}
	if _, err := e.repo.RecordUploads(as(dep), []shelfmark.Upload{{SHA256: sha(90), Size: 9, Stored: e.now}}); err != nil {
		t.Fatal(err)
	}
	nf := &shelfmark.File{Name: "p1-new.tif", MediaType: "image/tiff", Size: 9, SHA256: sha(90)}

	// refusals first: nothing is written
	stranger := rs(t)(e.repo.CreateResource(as(dep), &shelfmark.NewResource{Kind: shelfmark.KindFileSet,
		Parent: rs(t)(e.repo.CreateResource(as(dep), &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}})).ID}))
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		page  shelfmark.ID
		file  *shelfmark.File
		match int64
		code  string
	}{
		{"a page of another work", as(dep), stranger.ID, nf, 0, shelfmark.EINVALID},
		{"the work itself", as(dep), book.ID, nf, 0, shelfmark.EINVALID},
		{"a derivative's use", as(dep), page.ID, &shelfmark.File{Name: "t.jpg", MediaType: "image/jpeg", Size: 9, SHA256: sha(90), Use: shelfmark.UseThumbnail}, 0, shelfmark.EINVALID},
		{"no file", as(dep), page.ID, nil, 0, shelfmark.EINVALID},
		{"bytes never sent", as(dep), page.ID, &shelfmark.File{Name: "x.tif", MediaType: "image/tiff", Size: 9, SHA256: sha(91)}, 0, shelfmark.EINVALID},
		{"a stale version", as(dep), page.ID, nf, book.Version + 1, shelfmark.EPRECONDITION},
		{"another depositor", as(other), page.ID, nf, 0, shelfmark.EFORBIDDEN},
		{"anonymous", as(shelfmark.Anonymous()), page.ID, nf, 0, shelfmark.EUNAUTHORIZED},
	} {
		_, err := e.repo.ReplacePageFile(tc.ctx, book.ID, tc.page, tc.file, tc.match)
		if shelfmark.ErrorCode(err) != tc.code {
			t.Fatalf("%s: error %v, want code %s", tc.name, err, tc.code)
		}
	}
	if now := rs(t)(e.repo.FindResource(ctx, book.ID)); now.Version != book.Version {
		t.Fatalf("refusals changed the work: version %d, was %d", now.Version, book.Version)
	}
	if got := filesOf(page.ID); len(got) != 2 {
		t.Fatalf("refusals changed the page's files: %d", len(got))
	}

	res, err := e.repo.ReplacePageFile(as(dep), book.ID, page.ID, nf, book.Version)
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != shelfmark.KindFile || res.Parent != page.ID || res.File == nil || res.File.Use != shelfmark.UseOriginal || res.File.SHA256 != sha(90) {
		t.Fatalf("the new file: %+v", res)
	}
	after := filesOf(page.ID)
	if len(after) != 1 || after[0].ID != res.ID {
		t.Fatalf("the page after: %d files, want the new one alone", len(after))
	}
	for _, f := range before {
		if _, err := e.repo.FindResource(sys, f.ID); shelfmark.ErrorCode(err) != shelfmark.EGONE {
			t.Fatalf("the replaced %s file: %v, want it gone", f.File.Use, err)
		}
	}
	if len(filesOf(second.ID)) != 0 {
		t.Fatal("the other page got a file")
	}
	w := rs(t)(e.repo.FindResource(ctx, book.ID))
	p := rs(t)(e.repo.FindResource(ctx, page.ID))
	if w.Version != book.Version+1 || p.Version != page.Version+1 || w.Seq != p.Seq || w.Seq <= book.Seq {
		t.Fatalf("versions after: work %d (was %d), page %d (was %d), seqs %d %d", w.Version, book.Version, p.Version, page.Version, w.Seq, p.Seq)
	}
	newKey := keyOf(t, res.ID)
	if err := e.store.View(ctx, func(tx shelfmark.ReadTx) error {
		jobs, err := tx.Jobs(ctx, shelfmark.JobFilter{Queue: shelfmark.QueueCharacterize, State: shelfmark.JobQueued, Limit: 10})
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(jobs, func(j *shelfmark.Job) bool { return j.Resource == newKey }) {
			t.Errorf("no characterization queued for the new file: %d jobs", len(jobs))
		}
		ups, err := tx.Uploads(ctx, dep.User, []string{sha(90)})
		if err != nil {
			return err
		}
		if len(ups) != 0 {
			t.Errorf("the upload's record was not used: %+v", ups)
		}
		trail, err := tx.Audit(ctx, shelfmark.AuditQuery{Limit: 20})
		if err != nil {
			return err
		}
		var acts []string
		for _, a := range trail {
			if a.Actor == "dep" && a.Outcome == shelfmark.AuditOK && (a.Resource == newKey || a.Resource == keyOf(t, old.ID)) {
				acts = append(acts, a.Action)
			}
		}
		slices.Sort(acts)
		if !slices.Equal(acts, []string{"create", "delete"}) {
			t.Errorf("audit of the replacement: %v, want create and delete", acts)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// the page's text left search
	if hits := searchFor(t, e, "weir"); len(hits) != 0 {
		t.Fatalf("the replaced file's text is still found: %d hits", len(hits))
	}
}

// searchFor runs a search without a reader and returns its hits.
func searchFor(t *testing.T, e *accessEnv, text string) []shelfmark.SearchHit {
	t.Helper()
	ctx := context.Background()
	var hits []shelfmark.SearchHit
	if err := e.store.View(ctx, func(tx shelfmark.ReadTx) error {
		res, err := tx.Search(ctx, shelfmark.SearchQuery{Text: text, Now: e.now})
		if err != nil {
			return err
		}
		hits = res.Hits
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return hits
}

// twoDepositors is the fixture of the tests of a work's pages: a
// collection where the users dep and other hold the depositor role, on a
// store of its own, with a context and the system's.
func twoDepositors(t *testing.T, open Opener) (e *accessEnv, ctx, sys context.Context, coll *shelfmark.Resource, dep, other *shelfmark.Caller) {
	t.Helper()
	e = newAccessEnv(t, open)
	ctx = context.Background()
	sys = shelfmark.WithCaller(ctx, shelfmark.SystemCaller("test"))
	coll = rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	dep = e.user(t, "dep", shelfmark.ScopeWrite)
	other = e.user(t, "other", shelfmark.ScopeWrite)
	e.grant(t, coll, shelfmark.UserPrincipal("dep"), shelfmark.RoleDepositor)
	e.grant(t, coll, shelfmark.UserPrincipal("other"), shelfmark.RoleDepositor)
	return e, ctx, sys, coll, dep, other
}
