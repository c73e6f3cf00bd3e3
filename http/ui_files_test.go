package http

// Tests of adding files to a work after its deposit: each file a page at
// the end, titled with its name; a form without files or with a forged
// token stores nothing; someone who may not change the work is refused.

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

func TestUIAddFiles(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		be := newBulkEnv(t, backend, Options{})
		writerCtx := shelfmark.WithCaller(context.Background(), be.callerOf(be.writer))
		work := be.createAll(writerCtx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{be.C}, Metadata: titled("Log book")}})[0]
		first := be.createAll(writerCtx, []*shelfmark.NewResource{{Kind: shelfmark.KindFileSet, Parent: work.ID, Metadata: titled("Cover")}})[0]
		b := be.signedIn("writer")
		if p := b.get("/works/" + string(work.ID) + "/pages"); !strings.Contains(p.Body, `id="add-files"`) {
			t.Fatalf("the pages page has no form to add files: %d", p.Status)
		}
		p := b.postMultipart("/works/"+string(work.ID)+"/files", nil, map[string]map[string][]byte{"files": {"p2.txt": []byte("page two")}})
		if p.Status != 303 || !strings.Contains(p.Header.Get("Location"), "notice=filesadded") {
			t.Fatalf("adding a file: %d %s %.400s", p.Status, p.Header.Get("Location"), p.Body)
		}
		if p := b.get(p.Header.Get("Location")); !strings.Contains(p.Body, "The files were added as pages at the end.") {
			t.Errorf("the notice is not shown")
		}
		kids := children(t, be.testEnv, work.ID)
		if len(kids) != 2 || kids[0] != first.ID {
			t.Fatalf("the work's pages: %v", kids)
		}
		added := find(t, be.testEnv, kids[1])
		if titleValue(added) != "p2.txt" {
			t.Errorf("the new page's title: %q", titleValue(added))
		}
		if files := children(t, be.testEnv, kids[1]); len(files) != 1 || find(t, be.testEnv, files[0]).File.Name != "p2.txt" {
			t.Errorf("the new page's file: %v", files)
		}

		// nothing stored: no file, a forged token, someone else
		b.get("/works/" + string(work.ID) + "/pages")
		if p := b.postMultipart("/works/"+string(work.ID)+"/files", nil, nil); p.Status != 400 {
			t.Errorf("no file: %d", p.Status)
		}
		if p := b.postMultipart("/works/"+string(work.ID)+"/files", url.Values{csrfField: {"forged"}}, map[string]map[string][]byte{"files": {"x.txt": []byte("x")}}); p.Status != 403 {
			t.Errorf("a forged token: %d", p.Status)
		}
		other := be.signedIn("other")
		if p := other.postMultipart("/works/"+string(work.ID)+"/files", nil, map[string]map[string][]byte{"files": {"y.txt": []byte("y")}}); p.Status != 404 && p.Status != 403 {
			t.Errorf("someone who may not change the work: %d", p.Status)
		}
		if kids := children(t, be.testEnv, work.ID); len(kids) != 2 {
			t.Errorf("a refused form stored pages: %v", kids)
		}
	})
}
