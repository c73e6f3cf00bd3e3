package http

// Tests of the replacement of a page's file from the pages page: the new
// file becomes the page's only file and the old one is gone from the
// work's current version; no file, two files, a page of another work, a
// form without its version, a stale version and a forged token store
// nothing and keep no bytes; someone who may not change the work is
// refused.

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

func TestUIReplaceFile(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		be := newBulkEnv(t, backend, Options{})
		writerCtx := shelfmark.WithCaller(context.Background(), be.callerOf(be.writer))
		work := be.createAll(writerCtx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{be.C}, Metadata: titled("Log book")}})[0]
		elsewhere := be.createAll(writerCtx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{be.C}, Metadata: titled("Day book")}})[0]
		b := be.signedIn("writer")
		for _, w := range []shelfmark.ID{work.ID, elsewhere.ID} {
			if p := b.postMultipart("/works/"+string(w)+"/files", nil, map[string]map[string][]byte{"files": {"p1.txt": []byte("page one")}}); p.Status != 303 {
				t.Fatalf("adding a page: %d %.300s", p.Status, p.Body)
			}
		}
		page := children(t, be.testEnv, work.ID)[0]
		strange := children(t, be.testEnv, elsewhere.ID)[0]
		old := children(t, be.testEnv, page)
		if len(old) != 1 {
			t.Fatalf("the page's files before: %v", old)
		}
		version := func() string { return strconv.FormatInt(find(t, be.testEnv, work.ID).Version, 10) }
		action := "/works/" + string(work.ID) + "/pages/" + string(page) + "/file"
		if p := b.get("/works/" + string(work.ID) + "/pages"); !strings.Contains(p.Body, `action="`+action+`"`) || !strings.Contains(p.Body, `form="rep-`+string(page)+`"`) {
			t.Fatalf("the pages page has no form to replace the page's file: %d", p.Status)
		}
		pending := func() int64 {
			t.Helper()
			u, err := be.repo.UploadUsage(writerCtx)
			if err != nil {
				t.Fatal(err)
			}
			return u.Files
		}
		one := func(name, data string) map[string]map[string][]byte {
			return map[string]map[string][]byte{"files": {name: []byte(data)}}
		}

		// refused: nothing stored, no bytes kept
		stale := version()
		for _, tc := range []struct {
			name   string
			path   string
			fields url.Values
			files  map[string]map[string][]byte
			status int
		}{
			{"no file", action, url.Values{"version": {stale}}, nil, 400},
			{"two files", action, url.Values{"version": {stale}}, map[string]map[string][]byte{"files": {"a.txt": []byte("a"), "b.txt": []byte("b")}}, 400},
			{"no version", action, nil, one("c.txt", "c"), 400},
			{"a page of another work", "/works/" + string(work.ID) + "/pages/" + string(strange) + "/file", url.Values{"version": {stale}}, one("d.txt", "d"), 400},
			{"a page that is no id", "/works/" + string(work.ID) + "/pages/no%20id/file", url.Values{"version": {stale}}, one("e.txt", "e"), 404},
			{"a stale version", action, url.Values{"version": {strconv.Itoa(1000)}}, one("f.txt", "f"), 409},
			{"a forged token", action, url.Values{"version": {stale}, csrfField: {"forged"}}, one("g.txt", "g"), 403},
		} {
			if p := b.postMultipart(tc.path, tc.fields, tc.files); p.Status != tc.status {
				t.Errorf("%s: %d, want %d: %.300s", tc.name, p.Status, tc.status, p.Body)
			}
		}
		if n := pending(); n != 0 {
			t.Errorf("refused forms kept %d uploads", n)
		}
		if now := children(t, be.testEnv, page); len(now) != 1 || now[0] != old[0] {
			t.Fatalf("refused forms changed the page's files: %v", now)
		}
		other := be.signedIn("other")
		if p := other.postMultipart(action, url.Values{"version": {stale}}, one("h.txt", "h")); p.Status != 404 && p.Status != 403 {
			t.Errorf("someone who may not change the work: %d", p.Status)
		}

		// replaced
		p := b.postMultipart(action, url.Values{"version": {stale}}, one("p1-new.txt", "page one, again"))
		if p.Status != 303 || !strings.Contains(p.Header.Get("Location"), "notice=filereplaced") {
			t.Fatalf("replacing the file: %d %s %.400s", p.Status, p.Header.Get("Location"), p.Body)
		}
		if p := b.get(p.Header.Get("Location")); !strings.Contains(p.Body, "The page’s file was replaced") {
			t.Errorf("the notice is not shown")
		}
		now := children(t, be.testEnv, page)
		if len(now) != 1 || now[0] == old[0] || find(t, be.testEnv, now[0]).File.Name != "p1-new.txt" {
			t.Fatalf("the page's files after: %v (was %v)", now, old)
		}
		if _, err := be.repo.FindResource(context.Background(), old[0]); shelfmark.ErrorCode(err) != shelfmark.EGONE {
			t.Errorf("the replaced file: %v, want it gone", err)
		}
		if v := version(); v == stale {
			t.Errorf("the work kept its version %s", v)
		}
		if n := pending(); n != 0 {
			t.Errorf("the stored file is still counted as a pending upload: %d", n)
		}
	})
}
