package http

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/api"
)

// version times of the tests: an hour apart, on whole seconds (OCFL
// keeps a version's time to the second)
var (
	vt1 = time.Date(2026, 1, 10, 9, 0, 0, 0, time.UTC)
	vt2 = vt1.Add(time.Hour)
	vt3 = vt2.Add(time.Hour)
	vt4 = vt3.Add(time.Hour)
)

// timeMapOf reads a resource's JSON TimeMap.
func (e *policyEnv) timeMapOf(id shelfmark.ID, hdrs ...string) (api.TimeMapJSON, *response) {
	e.t.Helper()
	r := e.do("GET", resPath(id, "/versions"), nil, hdrs...)
	var tm api.TimeMapJSON
	if r.Status == http.StatusOK {
		r.json(e.t, &tm)
	}
	return tm, r
}

func versionsOf(tm api.TimeMapJSON) []int {
	var out []int
	for _, m := range tm.Mementos {
		out = append(out, m.Version)
	}
	return out
}

// mementoOf reads a memento's JSON.
type mementoBody struct {
	ID         shelfmark.ID               `json:"id"`
	Visibility string                     `json:"visibility"`
	Metadata   map[string]json.RawMessage `json:"metadata"`
	Memento    api.MementoJSON            `json:"memento"`
	Links      map[string]string          `json:"links"`
}

// TestVersions: a work edited twice and a file replaced make three
// versions: the TimeMap lists them (JSON and link-format with first and
// last, HTTP dates), the resource links to it and is its own TimeGate
// (Accept-Datetime before the first, between, after the last; a malformed
// one is 400), a memento is the resource as recorded with
// Memento-Datetime, the replaced file's bytes read at the version that
// held them, and a restore writes the old state through the ordinary
// writes (a new version then equals the old one, the file sets' order
// too).
func TestVersions(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		e := newPolicyEnv(t, backend, Options{})
		ctx := context.Background()
		work := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Metadata: titled("First title")}})[0].ID
		sets := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFileSet, Parent: work}, {Kind: shelfmark.KindFileSet, Parent: work}})
		a, b := sets[0].ID, sets[1].ID
		old := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFile, Parent: a, File: e.putBytes("p.txt", "text/plain", []byte("the first bytes"))}})[0].ID
		e.preserveAt(vt1, work)

		e.do("PATCH", resPath(work, ""), `{"add": {"dc:title": "Second title"}, "remove": {"dc:title": "First title"}}`, "Content-Type", ctJSON).want(t, 200)
		e.do("PUT", resPath(work, "/order"), jsonBody(map[string]any{"children": []shelfmark.ID{b, a}}), "Content-Type", ctJSON).want(t, 200)
		e.preserveAt(vt2, work)

		e.do("DELETE", resPath(old, ""), nil).want(t, 204)
		repl := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFile, Parent: a, File: e.putBytes("p.txt", "text/plain", []byte("the new bytes"))}})[0].ID
		e.preserveAt(vt3, work)

		// the TimeMap, as JSON
		tm, _ := e.timeMapOf(work)
		if !slices.Equal(versionsOf(tm), []int{1, 2, 3}) || tm.Truncated || !strings.HasSuffix(tm.Original, resPath(work, "")) {
			t.Fatalf("timemap: %+v", tm)
		}
		if tm.Mementos[0].Datetime != "2026-01-10T09:00:00Z" || !strings.HasSuffix(tm.Mementos[2].URL, resPath(work, "/versions/3")) {
			t.Fatalf("mementos: %+v", tm.Mementos)
		}
		// and as link-format
		lf := e.do("GET", resPath(work, "/versions"), nil, "Accept", "application/link-format").want(t, 200)
		body := string(lf.Body)
		if ct := lf.Header.Get("Content-Type"); ct != "application/link-format" {
			t.Fatalf("link-format served as %q", ct)
		}
		for _, want := range []string{
			`<` + e.ts.URL + resPath(work, "") + `>; rel="original"`,
			`<` + e.ts.URL + resPath(work, "/versions") + `>; rel="self"; type="application/link-format"; from="Sat, 10 Jan 2026 09:00:00 GMT"; until="Sat, 10 Jan 2026 11:00:00 GMT"`,
			`<` + e.ts.URL + resPath(work, "") + `>; rel="timegate"`,
			`<` + e.ts.URL + resPath(work, "/versions/1") + `>; rel="first memento"; datetime="Sat, 10 Jan 2026 09:00:00 GMT"`,
			`<` + e.ts.URL + resPath(work, "/versions/2") + `>; rel="memento"; datetime="Sat, 10 Jan 2026 10:00:00 GMT"`,
			`<` + e.ts.URL + resPath(work, "/versions/3") + `>; rel="last memento"; datetime="Sat, 10 Jan 2026 11:00:00 GMT"`,
		} {
			if !strings.Contains(body, want) {
				t.Fatalf("link-format lacks %s:\n%s", want, body)
			}
		}
		if r := e.do("GET", resPath(work, "/versions"), nil, "Accept", "application/json;q=0.5, application/link-format"); r.Header.Get("Content-Type") != "application/link-format" {
			t.Fatalf("preferred link-format served as %q", r.Header.Get("Content-Type"))
		}

		// the resource links to its TimeMap and varies on Accept-Datetime
		r := e.do("GET", resPath(work, ""), nil).want(t, 200)
		links := strings.Join(r.Header.Values("Link"), ", ")
		if !strings.Contains(links, resPath(work, "/versions")+`>; rel="timemap"`) || !strings.Contains(links, `rel="original timegate"`) ||
			!strings.Contains(r.Header.Get("Vary"), "Accept-Datetime") {
			t.Fatalf("resource headers: Link %s; Vary %s", links, r.Header.Get("Vary"))
		}

		// the TimeGate
		for _, c := range []struct {
			at   time.Time
			want int
		}{{vt1.Add(-24 * time.Hour), 1}, {vt1, 1}, {vt2.Add(30 * time.Minute), 2}, {vt3.Add(24 * time.Hour), 3}} {
			r := e.do("GET", resPath(work, ""), nil, "Accept-Datetime", c.at.Format(http.TimeFormat)).want(t, http.StatusFound)
			if loc := r.Header.Get("Location"); !strings.HasSuffix(loc, resPath(work, "/versions/"+string(rune('0'+c.want)))) {
				t.Fatalf("Accept-Datetime %s: Location %s, want version %d", c.at, loc, c.want)
			}
			if !strings.EqualFold(r.Header.Get("Vary"), "accept-datetime") {
				t.Fatalf("TimeGate Vary %q", r.Header.Get("Vary"))
			}
		}
		e.do("GET", resPath(work, ""), nil, "Accept-Datetime", "yesterday").wantError(t, 400, shelfmark.EINVALID)

		// a memento
		r = e.do("GET", resPath(work, "/versions/1"), nil).want(t, 200)
		var m1 mementoBody
		r.json(t, &m1)
		if r.Header.Get("Memento-Datetime") != "Sat, 10 Jan 2026 09:00:00 GMT" || m1.Memento.Version != 1 ||
			!strings.Contains(string(m1.Metadata["dc:title"]), "First title") || m1.Links["original"] != resPath(work, "") {
			t.Fatalf("memento 1: %s %s", r.Header.Get("Memento-Datetime"), r.Body)
		}
		if !strings.Contains(strings.Join(r.Header.Values("Link"), ","), `rel="timemap"`) {
			t.Fatalf("memento links: %v", r.Header.Values("Link"))
		}
		e.do("GET", resPath(work, "/versions/9"), nil).wantError(t, 404, shelfmark.ENOTFOUND)
		e.do("GET", resPath(work, "/versions/first"), nil).wantError(t, 400, shelfmark.EINVALID)

		// the replaced file's bytes at the versions that held them
		if got := string(e.do("GET", resPath(old, "/versions/2/content"), nil).want(t, 200).Body); got != "the first bytes" {
			t.Fatalf("old file at version 2: %q", got)
		}
		if got := string(e.do("GET", resPath(repl, "/versions/3/content"), nil).want(t, 200).Body); got != "the new bytes" {
			t.Fatalf("new file at version 3: %q", got)
		}
		e.do("GET", resPath(old, "/versions/3/content"), nil).wantError(t, 404, shelfmark.ENOTFOUND)
		e.do("GET", resPath(work, "/versions/1/content"), nil).wantError(t, 404, shelfmark.ENOTFOUND)
		ftm, _ := e.timeMapOf(old)
		if !slices.Equal(versionsOf(ftm), []int{1, 2}) {
			t.Fatalf("replaced file's timemap: %v", versionsOf(ftm))
		}

		// restore version 1: title and order come back, as a new version
		r = e.do("POST", resPath(work, "/versions/1/restore"), nil).want(t, 200)
		var rb api.RestoreJSON
		r.json(t, &rb)
		if rb.From.Version != 1 || len(rb.NotRestored) == 0 || !strings.Contains(string(rb.Resource), "First title") {
			t.Fatalf("restore: %s", r.Body)
		}
		cur := e.do("GET", resPath(work, ""), nil).want(t, 200)
		if !strings.Contains(string(cur.Body), "First title") || strings.Contains(string(cur.Body), "Second title") {
			t.Fatalf("after restore: %s", cur.Body)
		}
		if got := listed(e.do("GET", resPath(work, "/children"), nil).want(t, 200)); !slices.Equal(got, []shelfmark.ID{a, b}) {
			t.Fatalf("order after restore: %v, want [%s %s]", got, a, b)
		}
		e.preserveAt(vt4, work)
		tm, _ = e.timeMapOf(work)
		if !slices.Equal(versionsOf(tm), []int{1, 2, 3, 4}) {
			t.Fatalf("after restore: versions %v", versionsOf(tm))
		}
		var m4 mementoBody
		e.do("GET", resPath(work, "/versions/4"), nil).want(t, 200).json(t, &m4)
		if string(m4.Metadata["dc:title"]) != string(m1.Metadata["dc:title"]) || m4.Visibility != m1.Visibility {
			t.Fatalf("version 4 %s, want version 1's %s", m4.Metadata, m1.Metadata)
		}
		// the restored file set order is in version 4's record
		if kids := mementoChildren(t, e, work, 4); !slices.Equal(kids, []string{string(a), string(b)}) {
			t.Fatalf("version 4's file sets %v", kids)
		}
	})
}

// mementoChildren reads the file sets of version n of a work from the
// preservation copy's record.
func mementoChildren(t *testing.T, e *policyEnv, work shelfmark.ID, n int) []string {
	t.Helper()
	m, err := e.srv.opts.History.Memento(context.Background(), work, n)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range m.Children {
		if c.Kind == string(shelfmark.KindFileSet) {
			out = append(out, c.ID)
		}
	}
	return out
}

// TestVersionsAccess: versions obey the access policy as the resource
// does. A private work's versions are 404 to the public and served to its
// curator; a work public now but private in its first version shows the
// public only the later version (the TimeMap leaves the first out, its
// memento and file bytes are 404, and the TimeGate sends a time before the
// first to the first the caller may see), while a curator sees both; an
// embargo recorded in a version hides it from the public while the
// embargo runs, though it was lifted since; a restore takes a curator
// (anonymous 401, a viewer 403).
func TestVersionsAccess(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		e := newPolicyEnv(t, backend, Options{})
		ctx := context.Background()
		coll := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindCollection, Metadata: titled("C")}})[0].ID
		curator, viewer := e.addUser("curator", shelfmark.ScopeWrite), e.addUser("viewer", shelfmark.ScopeWrite)
		e.grantRoles(coll, []api.GrantJSON{{Principal: "user:curator", Role: "curator"}, {Principal: "user:viewer", Role: "viewer"}})
		ws := e.createAll(ctx, []*shelfmark.NewResource{
			{Kind: shelfmark.KindWork, Visibility: shelfmark.Private, MemberOf: []shelfmark.ID{coll}, Metadata: titled("always private")},
			{Kind: shelfmark.KindWork, Visibility: shelfmark.Private, MemberOf: []shelfmark.ID{coll}, Metadata: titled("draft")},
		})
		priv, pub := ws[0].ID, ws[1].ID
		set := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFileSet, Parent: pub}})[0].ID
		file := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFile, Parent: set, File: e.putBytes("d.txt", "text/plain", []byte("draft bytes"))}})[0].ID
		e.preserveAt(vt1, priv, pub)
		e.do("PATCH", resPath(pub, ""), `{"visibility": "public", "add": {"dc:title": "published"}, "remove": {"dc:title": "draft"}}`, "Content-Type", ctJSON).want(t, 200)
		e.preserveAt(vt2, pub)

		// a work embargoed in its first version, the embargo lifted since
		until := time.Now().Add(30 * 24 * time.Hour)
		emb := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Embargo: &until, MemberOf: []shelfmark.ID{coll}, Metadata: titled("embargoed")}})[0].ID
		e.preserveAt(vt1, emb)
		e.do("PATCH", resPath(emb, ""), `{"embargo": null}`, "Content-Type", ctJSON).want(t, 200)
		e.preserveAt(vt2, emb)
		if tm, _ := e.timeMapOf(emb, as("")...); !slices.Equal(versionsOf(tm), []int{2}) {
			t.Fatalf("public's timemap of a work embargoed then: %v", versionsOf(tm))
		}
		e.do("GET", resPath(emb, "/versions/1"), nil, as("")...).wantError(t, 404, shelfmark.ENOTFOUND)
		e.do("GET", resPath(emb, "/versions/1"), nil, as(curator)...).want(t, 200)

		anon := as("")
		// the private work: nothing for the public, everything for its curator
		for _, p := range []string{"/versions", "/versions/1"} {
			e.do("GET", resPath(priv, p), nil, anon...).wantError(t, 404, shelfmark.ENOTFOUND)
			e.do("GET", resPath(priv, p), nil, as(curator)...).want(t, 200)
		}
		e.do("GET", resPath(priv, ""), nil, as("", "Accept-Datetime", vt1.Format(http.TimeFormat))...).wantError(t, 404, shelfmark.ENOTFOUND)

		// public now, private in version 1
		if tm, _ := e.timeMapOf(pub, anon...); !slices.Equal(versionsOf(tm), []int{2}) {
			t.Fatalf("public's timemap: %v", versionsOf(tm))
		}
		if tm, _ := e.timeMapOf(pub, as(curator)...); !slices.Equal(versionsOf(tm), []int{1, 2}) {
			t.Fatalf("curator's timemap: %v", versionsOf(tm))
		}
		// a viewer may read private works of the collection: the draft too
		if tm, _ := e.timeMapOf(pub, as(viewer)...); !slices.Equal(versionsOf(tm), []int{1, 2}) {
			t.Fatalf("viewer's timemap: %v", versionsOf(tm))
		}
		e.do("GET", resPath(pub, "/versions/1"), nil, anon...).wantError(t, 404, shelfmark.ENOTFOUND)
		e.do("GET", resPath(pub, "/versions/2"), nil, anon...).want(t, 200)
		if r := e.do("GET", resPath(pub, "/versions/1"), nil, as(curator)...).want(t, 200); !strings.Contains(string(r.Body), "draft") {
			t.Fatalf("curator's memento 1: %s", r.Body)
		}
		e.do("GET", resPath(file, "/versions/1/content"), nil, anon...).wantError(t, 404, shelfmark.ENOTFOUND)
		e.do("GET", resPath(file, "/versions/2/content"), nil, anon...).want(t, 200)
		if got := string(e.do("GET", resPath(file, "/versions/1/content"), nil, as(curator)...).want(t, 200).Body); got != "draft bytes" {
			t.Fatalf("curator's bytes at 1: %q", got)
		}
		r := e.do("GET", resPath(pub, ""), nil, as("", "Accept-Datetime", vt1.Add(-time.Hour).Format(http.TimeFormat))...).want(t, http.StatusFound)
		if !strings.HasSuffix(r.Header.Get("Location"), resPath(pub, "/versions/2")) {
			t.Fatalf("public's TimeGate before the first: %s", r.Header.Get("Location"))
		}

		// restore: a curator's
		e.do("POST", resPath(pub, "/versions/1/restore"), nil, anon...).wantError(t, 401, shelfmark.EUNAUTHORIZED)
		e.do("POST", resPath(pub, "/versions/1/restore"), nil, as(viewer)...).wantError(t, 403, shelfmark.EFORBIDDEN)
		e.do("POST", resPath(priv, "/versions/1/restore"), nil, as(viewer)...).wantError(t, 403, shelfmark.EFORBIDDEN)
		e.do("POST", resPath(pub, "/versions/1/restore"), nil, as(curator)...).want(t, 200)
		// the draft is private again: the public no longer sees the work
		e.do("GET", resPath(pub, ""), nil, anon...).wantError(t, 404, shelfmark.ENOTFOUND)
		e.do("GET", resPath(pub, "/versions"), nil, anon...).wantError(t, 404, shelfmark.ENOTFOUND)
	})
}
