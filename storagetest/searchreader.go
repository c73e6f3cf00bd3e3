package storagetest

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// A signed-in caller's search (SearchQuery.Reader) shows exactly the
// documents the access policy lets that caller read: the test asks the
// policy (FindResource) about the resource each document's access
// follows, and compares.

// testSearchReader: for an anonymous caller, a signed-in one without
// roles, a depositor of private works, viewers of a collection (directly,
// through a nested collection, through a group), a viewer of the whole
// repository and an administrator, the hits, total and collection facet
// of a search and of a collection's browse are the documents whose
// resource the policy shows that caller, and no other; a deleted work's
// documents are shown to no one.
func testSearchReader(t *testing.T, open Opener) {
	e := newAccessEnv(t, open)
	ctx := context.Background()
	sys := shelfmark.WithCaller(ctx, shelfmark.SystemCaller("test"))
	future := e.now.Add(365 * 24 * time.Hour)
	codec := e.repo.IDs()
	create := func(nr *shelfmark.NewResource) *shelfmark.Resource {
		t.Helper()
		return rs(t)(e.repo.CreateResource(sys, nr))
	}
	in := func(cs ...*shelfmark.Resource) []shelfmark.ID {
		var out []shelfmark.ID
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	top := create(&shelfmark.NewResource{Kind: shelfmark.KindCollection})
	sub := create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, MemberOf: in(top)})
	secret := create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Visibility: shelfmark.Private})
	other := create(&shelfmark.NewResource{Kind: shelfmark.KindCollection})
	work := func(vis shelfmark.Visibility, emb *time.Time, cs ...*shelfmark.Resource) *shelfmark.Resource {
		return create(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: vis, Embargo: emb, MemberOf: in(cs...)})
	}
	pub := work(shelfmark.Public, nil, top)
	auth := work(shelfmark.Authenticated, nil, other)
	privTop := work(shelfmark.Private, nil, top)
	privSub := work(shelfmark.Private, nil, sub)
	emb := work(shelfmark.Public, &future, sub)
	inSecret := work(shelfmark.Private, nil, secret)
	inOther := work(shelfmark.Private, nil, other)
	owned := work(shelfmark.Private, nil)
	ownedChild := create(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private, Parent: owned.ID})
	ownedNested := work(shelfmark.Private, nil) // deposited by the owner, held by a root that is not
	nestedIn := create(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private, Parent: ownedNested.ID})
	nobody := work(shelfmark.Private, nil)
	gone := work(shelfmark.Public, nil, top)
	closedPage := create(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Visibility: shelfmark.Private, Parent: pub.ID})
	openPage := create(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: privSub.ID})

	ownerUser := e.user(t, "owner", shelfmark.ScopeRead)
	plain := e.user(t, "plain", shelfmark.ScopeRead)
	viewer := e.user(t, "viewer", shelfmark.ScopeRead)
	subViewer := e.user(t, "subviewer", shelfmark.ScopeRead)
	grouped := e.user(t, "grouped", shelfmark.ScopeRead, "readers")
	secretViewer := e.user(t, "secretviewer", shelfmark.ScopeRead)
	everything := e.user(t, "everything", shelfmark.ScopeRead)
	admin := &shelfmark.Caller{User: plain.User + 1000, Name: "root", Admin: true, Scope: shelfmark.ScopeRead}
	e.grant(t, top, shelfmark.UserPrincipal("viewer"), shelfmark.RoleViewer)
	e.grant(t, sub, shelfmark.UserPrincipal("subviewer"), shelfmark.RoleViewer)
	e.grant(t, other, shelfmark.GroupPrincipal("readers"), shelfmark.RoleViewer)
	e.grant(t, secret, shelfmark.UserPrincipal("secretviewer"), shelfmark.RoleViewer)
	e.grant(t, nil, shelfmark.UserPrincipal("everything"), shelfmark.RoleViewer)
	update(t, e.env, func(tx shelfmark.WriteTx) error {
		if err := tx.SetOwners(ctx, []int64{keyOf(t, owned.ID), keyOf(t, ownedChild.ID)}, ownerUser.User); err != nil {
			return err
		}
		// the nested work alone is the owner's: its root decides, so it
		// stays hidden from the owner
		return tx.SetOwners(ctx, []int64{keyOf(t, nestedIn.ID)}, ownerUser.User)
	})

	// a document of every resource (collections and works: their
	// metadata; the file sets: a page's text, following the file set's
	// access), each holding the word searched for
	var docs []shelfmark.SearchDoc
	access := map[int64]shelfmark.ID{}
	for _, r := range []*shelfmark.Resource{top, sub, secret, other, pub, auth, privTop, privSub, emb, inSecret, inOther, owned, ownedChild, ownedNested, nestedIn, nobody, gone} {
		k := keyOf(t, r.ID)
		docs = append(docs, shelfmark.SearchDoc{Key: k, Work: k, Kind: r.Kind, Title: "Title", Body: "common words"})
		access[k] = r.ID
	}
	for _, p := range []struct{ page, work *shelfmark.Resource }{{closedPage, pub}, {openPage, privSub}} {
		k := keyOf(t, p.page.ID)
		docs = append(docs, shelfmark.SearchDoc{Key: k, Work: keyOf(t, p.work.ID), Access: k, Kind: shelfmark.KindFileSet, Format: "TIFF", Body: "page of common text"})
		access[k] = p.page.ID
	}
	update(t, e.env, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs) })
	if err := e.repo.DeleteResource(sys, gone.ID, 0); err != nil {
		t.Fatal(err)
	}

	// sees asks the policy; a deleted resource is seen by no one
	sees := func(c *shelfmark.Caller, id shelfmark.ID) bool {
		t.Helper()
		if id == gone.ID {
			_, err := e.repo.FindResource(as(c), id)
			if code := shelfmark.ErrorCode(err); code != shelfmark.EGONE && code != shelfmark.ENOTFOUND {
				t.Fatalf("a deleted work as %s: %v", c.Actor(), err)
			}
			return false
		}
		return e.sees(t, c, id)
	}
	search := func(c *shelfmark.Caller, q shelfmark.SearchQuery) *shelfmark.SearchResult {
		t.Helper()
		q.Now, q.Limit, q.Facets = e.now, shelfmark.MaxSearchLimit, true
		var res *shelfmark.SearchResult
		view(t, e.env, func(tx shelfmark.ReadTx) (err error) {
			if q.Reader, err = e.repo.SearchReader(as(c), tx); err != nil {
				return err
			}
			res, err = tx.Search(context.Background(), q)
			return err
		})
		return res
	}
	topKey := keyOf(t, top.ID)
	members := map[int64]bool{}
	for _, r := range []*shelfmark.Resource{sub, pub, privTop, gone} {
		members[keyOf(t, r.ID)] = true
	}
	for _, tc := range []struct {
		name string
		c    *shelfmark.Caller
		// sees names a few documents the caller must see, and hidden a few
		// it must not, beside the comparison with the policy
		sees, hidden []*shelfmark.Resource
	}{
		{"anonymous", shelfmark.Anonymous(), []*shelfmark.Resource{pub, top}, []*shelfmark.Resource{auth, privTop, emb, closedPage}},
		{"signed in", plain, []*shelfmark.Resource{pub, auth}, []*shelfmark.Resource{privTop, emb, owned, closedPage}},
		{"depositor", ownerUser, []*shelfmark.Resource{owned, ownedChild, auth}, []*shelfmark.Resource{nestedIn, privTop, nobody}},
		{"viewer of a collection", viewer, []*shelfmark.Resource{privTop, privSub, emb, closedPage, openPage}, []*shelfmark.Resource{inSecret, inOther, owned}},
		{"viewer of a nested collection", subViewer, []*shelfmark.Resource{privSub, emb, openPage}, []*shelfmark.Resource{privTop, closedPage}},
		{"viewer through a group", grouped, []*shelfmark.Resource{inOther, auth}, []*shelfmark.Resource{privTop, secret}},
		{"viewer of a private collection", secretViewer, []*shelfmark.Resource{secret, inSecret}, []*shelfmark.Resource{privTop}},
		{"viewer of the repository", everything, []*shelfmark.Resource{nobody, nestedIn, secret}, []*shelfmark.Resource{gone}},
		{"administrator", admin, []*shelfmark.Resource{nobody, inSecret, closedPage}, []*shelfmark.Resource{gone}},
	} {
		var want, wantBrowse []int64
		for _, d := range docs {
			if !sees(tc.c, access[d.Key]) {
				continue
			}
			want = append(want, d.Key)
			if members[d.Work] {
				wantBrowse = append(wantBrowse, d.Key)
			}
		}
		slices.Sort(want)
		res := search(tc.c, shelfmark.SearchQuery{Text: "common"})
		got := slices.Sorted(slices.Values(hitKeys(res.Hits)))
		if !slices.Equal(got, want) || res.Total != int64(len(want)) || res.Estimated {
			t.Errorf("%s: search shows %v (total %d), the policy %v", tc.name, got, res.Total, want)
		}
		for _, r := range tc.sees {
			if !slices.Contains(got, keyOf(t, r.ID)) {
				t.Errorf("%s: %s not shown", tc.name, r.ID)
			}
		}
		for _, r := range tc.hidden {
			if slices.Contains(got, keyOf(t, r.ID)) {
				t.Errorf("%s: %s shown", tc.name, r.ID)
			}
		}
		// the collection facet counts only the collections the caller sees
		for _, c := range res.Collections {
			k, err := strconv.ParseInt(c.Value, 10, 64)
			if err != nil || !sees(tc.c, codec.Encode(k)) {
				t.Errorf("%s: facet of collection %s, which the caller may not see", tc.name, c.Value)
			}
		}
		if n := facetCount(res.Collections, keyString(keyOf(t, secret.ID))); (n > 0) != sees(tc.c, secret.ID) {
			t.Errorf("%s: facet of the private collection counts %d", tc.name, n)
		}
		// a browse of a collection: its members' documents the caller sees
		if !sees(tc.c, top.ID) {
			wantBrowse = nil
		}
		slices.Sort(wantBrowse)
		br := search(tc.c, shelfmark.SearchQuery{Collection: topKey})
		if got := slices.Sorted(slices.Values(hitKeys(br.Hits))); !slices.Equal(got, wantBrowse) || br.Total != int64(len(wantBrowse)) {
			t.Errorf("%s: browse shows %v (total %d), the policy %v", tc.name, got, br.Total, wantBrowse)
		}
		// and a search within it: every document holds the word, so it
		// finds what the browse lists
		in := search(tc.c, shelfmark.SearchQuery{Text: "common", Collection: topKey})
		if got := slices.Sorted(slices.Values(hitKeys(in.Hits))); !slices.Equal(got, wantBrowse) {
			t.Errorf("%s: search in a collection shows %v, the policy %v", tc.name, got, wantBrowse)
		}
	}
	// the private collection's own browse: for its viewer, not for others
	secretKey := keyOf(t, secret.ID)
	if r := search(secretViewer, shelfmark.SearchQuery{Collection: secretKey}); len(r.Hits) != 1 || r.Hits[0].Key != keyOf(t, inSecret.ID) {
		t.Errorf("the viewer's browse of a private collection: %v", hitKeys(r.Hits))
	}
	if r := search(plain, shelfmark.SearchQuery{Collection: secretKey}); len(r.Hits) != 0 || r.Total != 0 {
		t.Errorf("a browse of a private collection by another: %v", hitKeys(r.Hits))
	}
}
