package http

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

func TestMembers(t *testing.T) {
	e := newEnv(t, Options{})
	coll := e.create("/api/v1/collections", `{}`)
	cp := "/api/v1/resources/" + string(coll.ID)
	var members []shelfmark.ID
	for i := 0; i < 3; i++ {
		members = append(members, e.create("/api/v1/works", fmt.Sprintf(`{"memberOf": [%q], "metadata": {"dcterms:title": "w%d"}}`, coll.ID, i)).ID)
	}
	// Two more, added through the members route; one of them a collection.
	w := e.create("/api/v1/works", `{}`)
	sub := e.create("/api/v1/collections", `{}`)
	e.do("POST", cp+"/members", `{"members": ["`+string(w.ID)+`", "`+string(sub.ID)+`", "`+string(w.ID)+`"]}`, "Content-Type", "application/json").want(t, http.StatusNoContent)
	members = append(members, w.ID, sub.ID)
	if got := e.get(w.ID); got.Version != 2 || !slices.Equal(got.MemberOf, []shelfmark.ID{coll.ID}) {
		t.Errorf("member after POST: version %d, memberOf %v", got.Version, got.MemberOf)
	}
	if got := e.get(coll.ID); got.Version != 1 {
		t.Errorf("the collection's version moved to %d (members are stored on the member)", got.Version)
	}

	// Paging with limit=2 returns every member exactly once.
	var seen []shelfmark.ID
	next := cp + "/members?limit=2"
	pages := 0
	for next != "" {
		pages++
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		r := e.do("GET", next, nil).want(t, http.StatusOK)
		var p page
		r.json(t, &p)
		if len(p.Items) > 2 || len(p.Items) == 0 {
			t.Fatalf("page %d has %d items", pages, len(p.Items))
		}
		for _, it := range p.Items {
			seen = append(seen, it.ID)
		}
		link := r.Header.Get("Link")
		if p.Next != "" {
			if !strings.HasPrefix(p.Next, cp+"/members?") || !strings.Contains(p.Next, "limit=2") {
				t.Errorf("next %q", p.Next)
			}
			if link != "<"+p.Next+`>; rel="next"` {
				t.Errorf("Link %q for next %q", link, p.Next)
			}
		} else if link != "" {
			t.Errorf("last page has Link %q", link)
		}
		next = p.Next
	}
	if pages != 3 {
		t.Errorf("%d pages for 5 members by 2", pages)
	}
	got, want := slices.Clone(seen), slices.Clone(members)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("members seen %v, want %v", seen, members)
	}

	// Removing a member, then listing again.
	e.do("DELETE", cp+"/members/"+string(members[0]), nil).want(t, http.StatusNoContent)
	var all page
	e.do("GET", cp+"/members", nil).want(t, http.StatusOK).json(t, &all)
	if len(all.Items) != 4 || all.Next != "" || slices.ContainsFunc(all.Items, func(it pageItem) bool { return it.ID == members[0] }) {
		t.Errorf("after removal: %+v", all)
	}

	// Refusals store nothing.
	work := e.create("/api/v1/works", `{}`)
	fs := e.create("/api/v1/filesets", `{"parent": "`+string(work.ID)+`"}`)
	wp := "/api/v1/resources/" + string(work.ID)
	for _, rq := range []struct {
		method, path, body string
		status             int
		code               string
	}{
		// A work has no members.
		{"POST", wp + "/members", `{"members": ["` + string(w.ID) + `"]}`, http.StatusBadRequest, shelfmark.EINVALID},
		{"GET", wp + "/members", "", http.StatusBadRequest, shelfmark.EINVALID},
		// Only works and collections can be members.
		{"POST", cp + "/members", `{"members": ["` + string(fs.ID) + `"]}`, http.StatusBadRequest, shelfmark.EINVALID},
		// Cycles and self-membership.
		{"POST", "/api/v1/resources/" + string(sub.ID) + "/members", `{"members": ["` + string(coll.ID) + `"]}`, http.StatusBadRequest, shelfmark.EINVALID},
		{"POST", cp + "/members", `{"members": ["` + string(coll.ID) + `"]}`, http.StatusBadRequest, shelfmark.EINVALID},
		// Unknown, malformed and missing members; bad bodies.
		{"POST", cp + "/members", `{"members": ["` + string(e.repo.IDs().Encode(shelfmark.MaxKey)) + `"]}`, http.StatusBadRequest, shelfmark.EINVALID},
		{"POST", cp + "/members", `{"members": ["nonsense"]}`, http.StatusBadRequest, shelfmark.EINVALID},
		{"POST", cp + "/members", `{"members": []}`, http.StatusBadRequest, shelfmark.EINVALID},
		{"POST", cp + "/members", `{"member": ["` + string(w.ID) + `"]}`, http.StatusBadRequest, shelfmark.EINVALID},
		{"POST", cp + "/members", `{"members": "` + string(w.ID) + `"}`, http.StatusBadRequest, shelfmark.EINVALID},
		// Bad paging parameters.
		{"GET", cp + "/members?limit=0", "", http.StatusBadRequest, shelfmark.EINVALID},
		{"GET", cp + "/members?limit=1001", "", http.StatusBadRequest, shelfmark.EINVALID},
		{"GET", cp + "/members?limit=two", "", http.StatusBadRequest, shelfmark.EINVALID},
		{"GET", cp + "/members?after=zzz", "", http.StatusBadRequest, shelfmark.EINVALID},
	} {
		before := e.counts()
		var body any
		var hdrs []string
		if rq.body != "" {
			body, hdrs = rq.body, []string{"Content-Type", "application/json"}
		}
		r := e.do(rq.method, rq.path, body, hdrs...)
		r.wantError(t, rq.status, rq.code)
		r.wantNoDataWrites(t)
		e.wantCounts(before)
	}
	if got := e.get(w.ID); got.Version != 2 {
		t.Errorf("refused requests changed a member: version %d", got.Version)
	}
}

func TestOrder(t *testing.T) {
	e := newEnv(t, Options{})
	work := e.create("/api/v1/works", `{}`)
	wp := "/api/v1/resources/" + string(work.ID)
	var kids []shelfmark.ID
	for i := 0; i < 4; i++ {
		kids = append(kids, e.create("/api/v1/filesets", `{"parent": "`+string(work.ID)+`"}`).ID)
	}
	kids = append(kids, e.create("/api/v1/works", `{"parent": "`+string(work.ID)+`"}`).ID)
	otherWork := e.create("/api/v1/works", `{}`)
	stranger := e.create("/api/v1/filesets", `{"parent": "`+string(otherWork.ID)+`"}`)

	children := func(limit string) ([]shelfmark.ID, []int) {
		t.Helper()
		var ids []shelfmark.ID
		var pos []int
		next := wp + "/children" + limit
		for n := 0; next != ""; n++ {
			if n > 10 {
				t.Fatal("paging does not end")
			}
			var p page
			r := e.do("GET", next, nil).want(t, http.StatusOK)
			r.json(t, &p)
			if p.Next != "" && r.Header.Get("Link") != "<"+p.Next+`>; rel="next"` {
				t.Errorf("Link %q for next %q", r.Header.Get("Link"), p.Next)
			}
			for _, it := range p.Items {
				ids, pos = append(ids, it.ID), append(pos, it.Position)
			}
			next = p.Next
		}
		return ids, pos
	}
	// Before any order: by creation, no positions.
	ids, pos := children("")
	if !slices.Equal(ids, kids) || !slices.Equal(pos, []int{0, 0, 0, 0, 0}) {
		t.Errorf("unordered children %v %v, want %v", ids, pos, kids)
	}

	for _, rq := range []struct {
		name, body, ifMatch string
	}{
		{"non-child", `{"children": ["` + string(kids[1]) + `", "` + string(stranger.ID) + `"]}`, ""},
		{"parent itself", `{"children": ["` + string(work.ID) + `"]}`, ""},
		{"unknown", `{"children": ["` + string(e.repo.IDs().Encode(shelfmark.MaxKey)) + `"]}`, ""},
		{"child twice", `{"children": ["` + string(kids[2]) + `", "` + string(kids[0]) + `", "` + string(kids[2]) + `"]}`, ""},
		{"malformed id", `{"children": ["` + string(kids[0]) + `", "bogus"]}`, ""},
		{"unknown field", `{"children": [], "order": []}`, ""},
		{"not a list", `{"children": "` + string(kids[0]) + `"}`, ""},
	} {
		t.Run(rq.name, func(t *testing.T) {
			before := e.counts()
			r := e.do("PUT", wp+"/order", rq.body, "Content-Type", "application/json")
			eb := r.wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
			switch rq.name {
			case "non-child":
				if eb.Details["id"] != string(stranger.ID) {
					t.Errorf("details %v", eb.Details)
				}
			case "child twice":
				if eb.Details["id"] != string(kids[2]) || !strings.Contains(eb.Message, "positions 1 and 3") {
					t.Errorf("message %q, details %v", eb.Message, eb.Details)
				}
				r.wantNoWrites(t)
			}
			r.wantNoDataWrites(t)
			e.wantCounts(before)
		})
	}
	// A file set has no ordered children (only works do).
	e.do("PUT", "/api/v1/resources/"+string(kids[0])+"/order", `{"children": []}`, "Content-Type", "application/json").wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
	if got := e.get(work.ID); got.Version != 1 {
		t.Errorf("refused orders changed the work: version %d", got.Version)
	}
	if ids, pos := children(""); !slices.Equal(ids, kids) || !slices.Equal(pos, []int{0, 0, 0, 0, 0}) {
		t.Errorf("refused orders changed the children: %v %v", ids, pos)
	}

	// A valid order, naming four of five children.
	order := []shelfmark.ID{kids[3], kids[0], kids[4], kids[2]}
	body := `{"children": ["` + string(order[0]) + `", "` + string(order[1]) + `", "` + string(order[2]) + `", "` + string(order[3]) + `"]}`
	r := e.do("PUT", wp+"/order", body, "Content-Type", "application/json", "If-Match", `"1"`).want(t, http.StatusOK)
	if r.Header.Get("ETag") != `"2"` {
		t.Errorf("ETag %q after order", r.Header.Get("ETag"))
	}
	var out struct {
		ID       shelfmark.ID `json:"id"`
		Version  int64        `json:"version"`
		Children int          `json:"children"`
	}
	r.json(t, &out)
	if out.ID != work.ID || out.Version != 2 || out.Children != 4 {
		t.Errorf("order response %s", r.Body)
	}
	wantIDs := append(slices.Clone(order), kids[1]) // the unnamed child follows
	for _, limit := range []string{"", "?limit=2", "?limit=1"} {
		ids, pos := children(limit)
		if !slices.Equal(ids, wantIDs) || !slices.Equal(pos, []int{1, 2, 3, 4, 0}) {
			t.Errorf("children%s: %v %v, want %v with positions 1-4", limit, ids, pos, wantIDs)
		}
	}
	for i, id := range order {
		if got := e.get(id); got.Position != i+1 || got.Parent != work.ID {
			t.Errorf("%s: position %d parent %s", id, got.Position, got.Parent)
		}
	}
	// An empty order makes every child unordered again.
	e.do("PUT", wp+"/order", `{"children": []}`, "Content-Type", "application/json").want(t, http.StatusOK)
	if ids, pos := children(""); !slices.Equal(ids, kids) || !slices.Equal(pos, []int{0, 0, 0, 0, 0}) {
		t.Errorf("after the empty order: %v %v", ids, pos)
	}
	e.do("GET", wp+"/children?after=nonsense", nil).wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
}
