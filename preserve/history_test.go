package preserve

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// titled is metadata with one title.
func titled(v string) []shelfmark.Statement {
	return []shelfmark.Statement{{Predicate: shelfmark.NSDCTerms + "title", Object: shelfmark.NewLiteral(v)}}
}

// catchUp lets the window pass and preserves what is due.
func (s *stack) catchUp(t *testing.T) {
	t.Helper()
	s.clock.Add(time.Minute)
	if _, _, err := s.p.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// fileOf is the one live file of the file set set.
func (s *stack) fileOf(t *testing.T, set shelfmark.ID) shelfmark.ID {
	t.Helper()
	page, err := s.repo.ListChildren(s.ctx, set, shelfmark.PageRequest{Limit: 10})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("files of %s: %v %v", set, page, err)
	}
	return page.Items[0].ID
}

// mementoBytes reads a memento's bytes.
func mementoBytes(t *testing.T, m *Memento) string {
	t.Helper()
	rc, err := m.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHistory: a work's timeline lists every version of its object with
// the access each recorded; a file's lists only the versions that held
// it; a memento gives the row, metadata and children as recorded, and a
// file's bytes as of its version after the file was replaced; a version
// the object does not have, or that does not hold the resource, is
// ENOTFOUND; At picks the version in force, the first before it and the
// last after it; MaxVersions truncates the timeline to the newest.
func TestHistory(t *testing.T) {
	stacks(t, func(t *testing.T, s *stack) {
		h := NewHistory(s.p.store, s.root, s.p.ids, HistoryOptions{})
		private := shelfmark.Private
		work, err := s.repo.CreateResource(s.ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: titled("First title")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Timeline(s.ctx, work.ID); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
			t.Fatalf("timeline before any version: %v", err)
		}
		set1 := s.page(t, work.ID, "page one")
		set2 := s.page(t, work.ID, "page two")
		old := s.fileOf(t, set1)
		s.catchUp(t) // v1: public, First title, set1 then set2

		if _, err := s.repo.UpdateResource(s.ctx, work.ID, shelfmark.ResourceUpdate{Replace: ptr(titled("Second title")), Visibility: &private}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.repo.SetOrder(s.ctx, work.ID, []shelfmark.ID{set2, set1}, 0); err != nil {
			t.Fatal(err)
		}
		s.catchUp(t) // v2: private, Second title, set2 then set1

		// the first page's file is replaced by another
		if err := s.repo.DeleteResource(s.ctx, old, 0); err != nil {
			t.Fatal(err)
		}
		b, err := s.blobs.Put(s.ctx, strings.NewReader("page one, again"), shelfmark.PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		repl, err := s.repo.CreateResource(s.ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: set1, File: &shelfmark.File{
			Name: "page.txt", MediaType: "text/plain", Size: b.Size, SHA256: b.Digests[shelfmark.SHA256], Use: shelfmark.UseOriginal}})
		if err != nil {
			t.Fatal(err)
		}
		s.catchUp(t) // v3

		tl, err := h.Timeline(s.ctx, work.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(tl.Versions) != 3 || tl.Truncated || tl.Object != ObjectID(work.ID) {
			t.Fatalf("work timeline: %+v", tl)
		}
		if tl.Versions[0].Access.Visibility != shelfmark.Public || tl.Versions[1].Access.Visibility != shelfmark.Private {
			t.Fatalf("recorded access: %+v", tl.Versions)
		}
		for i, v := range tl.Versions {
			if v.Num != i+1 || v.Created.IsZero() || !strings.Contains(v.Message, string(work.ID)) {
				t.Fatalf("version %d: %+v", i, v)
			}
		}
		// a page held by a private work is as hidden as the work
		stl, err := h.Timeline(s.ctx, set1)
		if err != nil || len(stl.Versions) != 3 || stl.Versions[1].Access.Visibility != shelfmark.Private {
			t.Fatalf("file set timeline: %+v %v", stl, err)
		}
		otl, err := h.Timeline(s.ctx, old)
		if err != nil || len(otl.Versions) != 2 || otl.Versions[1].Num != 2 {
			t.Fatalf("replaced file's timeline: %+v %v", otl, err)
		}
		rtl, err := h.Timeline(s.ctx, repl.ID)
		if err != nil || len(rtl.Versions) != 1 || rtl.Versions[0].Num != 3 {
			t.Fatalf("replacement's timeline: %+v %v", rtl, err)
		}

		m, err := h.Memento(s.ctx, work.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Metadata) != 1 || m.Metadata[0].Object.Value != "First title" || m.Resource.Visibility != "public" {
			t.Fatalf("memento 1: %+v", m)
		}
		if len(m.Children) != 2 || m.Children[0].ID != string(set1) || m.Children[1].ID != string(set2) {
			t.Fatalf("children in version 1: %+v", m.Children)
		}
		m2, err := h.Memento(s.ctx, work.ID, 2)
		if err != nil {
			t.Fatal(err)
		}
		if m2.Metadata[0].Object.Value != "Second title" || m2.Children[0].ID != string(set2) || m2.Version.Access.Visibility != shelfmark.Private {
			t.Fatalf("memento 2: %+v", m2)
		}
		if _, err := m.Open(s.ctx); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
			t.Fatalf("bytes of a work: %v", err)
		}

		// the replaced file's bytes as of version 2, the new ones in 3
		mo, err := h.Memento(s.ctx, old, 2)
		if err != nil {
			t.Fatal(err)
		}
		if got := mementoBytes(t, mo); got != "page one" {
			t.Fatalf("old file at version 2: %q", got)
		}
		mr, err := h.Memento(s.ctx, repl.ID, 3)
		if err != nil {
			t.Fatal(err)
		}
		if got := mementoBytes(t, mr); got != "page one, again" {
			t.Fatalf("new file at version 3: %q", got)
		}
		for _, c := range []struct {
			id shelfmark.ID
			n  int
		}{{old, 3}, {repl.ID, 1}, {work.ID, 4}, {work.ID, 0}} {
			if _, err := h.Memento(s.ctx, c.id, c.n); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
				t.Fatalf("memento %d of %s: %v", c.n, c.id, err)
			}
		}
		if _, err := h.Timeline(s.ctx, "zzzzzzzzzz"); err == nil {
			t.Fatal("timeline of an unknown id")
		}

		// At: before the first, between, after the last
		first, last := tl.Versions[0], tl.Versions[2]
		if v, _ := tl.At(first.Created.Add(-time.Hour)); v.Num != 1 {
			t.Fatalf("before the first: %d", v.Num)
		}
		if v, _ := tl.At(tl.Versions[1].Created.Add(time.Second)); v.Num != 2 {
			t.Fatalf("between: %d", v.Num)
		}
		if v, _ := tl.At(last.Created.Add(time.Hour)); v.Num != 3 {
			t.Fatalf("after the last: %d", v.Num)
		}

		// the newest versions only
		short := NewHistory(s.p.store, s.root, s.p.ids, HistoryOptions{MaxVersions: 2})
		if tl, err := short.Timeline(s.ctx, work.ID); err != nil || !tl.Truncated || len(tl.Versions) != 2 || tl.Versions[0].Num != 2 {
			t.Fatalf("truncated timeline: %+v %v", tl, err)
		}
		// a record larger than the cap is an error, not a partial answer
		tiny := NewHistory(s.p.store, s.root, s.p.ids, HistoryOptions{MaxRecordBytes: 100})
		if _, err := tiny.Memento(s.ctx, work.ID, 1); err == nil || !strings.Contains(err.Error(), "larger than") {
			t.Fatalf("a record past the cap: %v", err)
		}
	})
}

func ptr[T any](v T) *T { return &v }
