package storagetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// testPurge: a purge removes a work and everything of it — its file sets
// and files (a deleted one too), its child work, their metadata,
// memberships, source keys, jobs, grants, owners and search documents —
// turns its OAI-PMH records into deleted records without sets or
// metadata, reports the digests its files named, is audited with its
// reason, and leaves every other resource as it was (a work sharing bytes
// keeps them referenced). A collection's purge takes its OAI set and its
// members' edges. Only administrators may purge, with a reason, a work or
// collection that exists.
func testPurge(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	ids := e.repo.IDs()
	key := func(id shelfmark.ID) int64 {
		k, err := ids.Key(id)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	sha := func(i int) string { return fmt.Sprintf("%064x", i) }
	file := func(parent shelfmark.ID, s string) *shelfmark.Resource {
		return rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: parent,
			File: &shelfmark.File{Name: "f.txt", MediaType: "text/plain", Size: 1, SHA256: s, Use: shelfmark.UseOriginal}}))
	}
	coll := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: []shelfmark.Statement{title("Letters")}}))
	roots, errs := e.repo.CreateGroups(ctx, []*shelfmark.NewGroup{{SourceKey: "dir:/takedown#1", Resources: []*shelfmark.NewResource{
		{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}, Metadata: sampleMetadata(4)}}}})
	if errs[0] != nil {
		t.Fatal(errs[0])
	}
	w := roots[0]
	fs1 := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID, Metadata: []shelfmark.Statement{title("p. 1")}}))
	f1 := file(fs1.ID, sha(1))
	fs2 := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID}))
	f2 := file(fs2.ID, sha(2))
	child := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Parent: w.ID, Metadata: []shelfmark.Statement{title("volume 2")}}))
	fs3 := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: child.ID}))
	f3 := file(fs3.ID, sha(3))
	if err := e.repo.DeleteResource(ctx, fs2.ID, 0); err != nil { // a deleted page is purged too
		t.Fatal(err)
	}
	other := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}, Metadata: []shelfmark.Statement{title("kept")}}))
	ofs := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: other.ID}))
	of := file(ofs.ID, sha(1)) // the same bytes as page 1
	tree := []*shelfmark.Resource{w, fs1, f1, fs2, f2, child, fs3, f3}
	var treeKeys []int64
	for _, r := range tree {
		treeKeys = append(treeKeys, key(r.ID))
	}
	wk, ck, ok := key(w.ID), key(coll.ID), key(other.ID)
	now := time.Date(2026, 4, 5, 6, 7, 8, 0, time.UTC)
	if err := e.store.Update(ctx, func(tx shelfmark.WriteTx) error {
		if err := tx.PutSearchDocs(ctx, []shelfmark.SearchDoc{{Key: wk, Work: wk, Kind: shelfmark.KindWork, Title: "takedown", Body: "secret words"},
			{Key: key(fs1.ID), Work: wk, Kind: shelfmark.KindFileSet, Format: "text", Title: "p. 1", Body: "page text"},
			{Key: ok, Work: ok, Kind: shelfmark.KindWork, Title: "kept", Body: "other words"}}); err != nil {
			return err
		}
		if err := tx.PutOAIRecords(ctx, []*shelfmark.OAIRecord{
			{Prefix: "oai_dc", Seq: 1, Key: wk, Datestamp: now, Sets: []int64{ck}, Payload: []byte("<dc>takedown</dc>")},
			{Prefix: "marcxml", Seq: 2, Key: wk, Datestamp: now, Sets: []int64{ck}, Payload: []byte("<record/>")},
			{Prefix: "oai_dc", Seq: 3, Key: ok, Datestamp: now, Sets: []int64{ck}, Payload: []byte("<dc>kept</dc>")}}); err != nil {
			return err
		}
		if _, err := tx.AddCounter(ctx, "oai_seq", 3); err != nil {
			return err
		}
		if err := tx.PutOAISets(ctx, []shelfmark.OAISet{{Key: ck, Spec: "letters", Name: "Letters"}}); err != nil {
			return err
		}
		if err := tx.SetGrants(ctx, wk, []shelfmark.Grant{{Resource: wk, Principal: shelfmark.UserPrincipal("ann"), Role: shelfmark.RoleManager}}); err != nil {
			return err
		}
		if err := tx.SetOwners(ctx, []int64{wk, ok}, 7); err != nil {
			return err
		}
		return tx.EnqueueJobs(ctx, []shelfmark.NewJob{{Queue: shelfmark.QueueCharacterize, Resource: key(f1.ID)},
			{Queue: shelfmark.QueueCharacterize, Resource: key(of.ID)}}, now)
	}); err != nil {
		t.Fatal(err)
	}

	// refusals: nothing happens
	user := shelfmark.WithCaller(ctx, &shelfmark.Caller{User: 3, Name: "bob", Scope: shelfmark.ScopeWrite})
	_, err := e.repo.Purge(user, w.ID, "copyright claim", shelfmark.PurgeOptions{})
	wantCode(t, err, shelfmark.EFORBIDDEN)
	_, err = e.repo.Purge(ctx, w.ID, "  ", shelfmark.PurgeOptions{})
	wantCode(t, err, shelfmark.EINVALID)
	_, err = e.repo.Purge(ctx, fs1.ID, "copyright claim", shelfmark.PurgeOptions{})
	wantCode(t, err, shelfmark.EINVALID)
	rs(t)(e.repo.FindResource(ctx, w.ID))

	var called []shelfmark.ID
	res, err := e.repo.Purge(ctx, w.ID, "copyright claim #12", shelfmark.PurgeOptions{Objects: func(_ context.Context, ids []shelfmark.ID) error {
		called = ids
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Resources != len(tree) || res.Digests != 3 || res.OAIDeleted != 2 || !slices.Equal(called, []shelfmark.ID{w.ID, child.ID}) && !slices.Equal(called, []shelfmark.ID{child.ID, w.ID}) {
		t.Fatalf("purge result %+v, objects %v", res, called)
	}
	for _, r := range tree {
		_, err := e.repo.FindResource(ctx, r.ID)
		wantCode(t, err, shelfmark.ENOTFOUND)
	}
	_, err = e.repo.Purge(ctx, w.ID, "again", shelfmark.PurgeOptions{})
	wantCode(t, err, shelfmark.ENOTFOUND)

	if err := e.store.View(ctx, func(tx shelfmark.ReadTx) error {
		rows, err := tx.Resources(ctx, treeKeys)
		if err != nil || len(rows) != 0 {
			return fmt.Errorf("resources left: %d %v", len(rows), err)
		}
		if f, err := tx.FieldsOf(ctx, treeKeys); err != nil || len(f) != 0 {
			return fmt.Errorf("fields left: %v %v", f, err)
		}
		if m, err := tx.MemberOfMany(ctx, treeKeys); err != nil || len(m) != 0 {
			return fmt.Errorf("memberships left: %v %v", m, err)
		}
		members, err := tx.Members(ctx, ck, 0, 10)
		if err != nil || len(members) != 1 || members[0].Key != ok {
			return fmt.Errorf("the collection's members: %v %v", members, err)
		}
		if src, err := tx.Sources(ctx, []string{"dir:/takedown#1"}); err != nil || len(src) != 0 {
			return fmt.Errorf("source key left: %v %v", src, err)
		}
		for _, k := range []int64{wk, key(fs1.ID)} {
			if d, err := tx.SearchDoc(ctx, k); err != nil || d != nil {
				return fmt.Errorf("search document of %d left: %+v %v", k, d, err)
			}
		}
		if d, err := tx.SearchDoc(ctx, ok); err != nil || d == nil {
			return fmt.Errorf("the other work's search document is gone: %v", err)
		}
		for _, k := range treeKeys {
			if f, err := tx.File(ctx, k); err == nil && f != nil {
				return fmt.Errorf("file row of %d left", k)
			}
		}
		g, err := tx.GrantsOn(ctx, []int64{wk})
		if err != nil || len(g) != 0 {
			return fmt.Errorf("grants left: %v %v", g, err)
		}
		owners, err := tx.Owners(ctx, []int64{wk, ok})
		if err != nil || len(owners) != 1 || owners[ok] != 7 {
			return fmt.Errorf("owners: %v %v", owners, err)
		}
		jobs, err := tx.Jobs(ctx, shelfmark.JobFilter{Queue: shelfmark.QueueCharacterize, Limit: 100})
		if err != nil {
			return err
		}
		for _, j := range jobs {
			if slices.Contains(treeKeys, j.Resource) {
				return fmt.Errorf("job %d of purged resource %d left", j.ID, j.Resource)
			}
		}
		recs, err := tx.OAIRecordsOf(ctx, []int64{wk, ok})
		if err != nil || len(recs) != 3 {
			return fmt.Errorf("oai records: %v %v", recs, err)
		}
		for _, r := range recs {
			if r.Key == wk && (!r.Deleted || len(r.Sets) != 0 || r.Seq <= 3) {
				return fmt.Errorf("the purged work's oai record: %+v", r)
			}
			if r.Key == ok && r.Deleted {
				return fmt.Errorf("the other work's oai record: %+v", r)
			}
		}
		for _, prefix := range []string{"oai_dc", "marcxml"} {
			full, err := tx.OAIRecord(ctx, prefix, wk)
			if err != nil || full == nil || len(full.Payload) != 0 {
				return fmt.Errorf("the purged work's %s record keeps its payload: %+v %v", prefix, full, err)
			}
		}
		audit, err := tx.Audit(ctx, shelfmark.AuditQuery{Resource: wk, Limit: 20})
		if err != nil {
			return err
		}
		var purged, denied bool
		for _, a := range audit {
			if a.Action == "purge" && a.Outcome == shelfmark.AuditOK && strings.Contains(a.Detail, "copyright claim #12") {
				purged = true
			}
			if a.Action == "purge" && a.Outcome == shelfmark.AuditDenied && a.Actor == "bob" {
				denied = true
			}
		}
		if !purged || !denied {
			return fmt.Errorf("the audit trail of the purge: %+v", audit)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// the bytes of page 1 are still held by the other work; those of the
	// purged work's other files are held by nothing
	if refs, ok := e.store.(shelfmark.BlobReferences); ok {
		held, err := refs.ReferencedBlobs(ctx, []string{sha(1), sha(2), sha(3)})
		if err != nil || !held[sha(1)] || held[sha(2)] || held[sha(3)] {
			t.Fatalf("references after the purge: %v %v", held, err)
		}
	}
	kept := rs(t)(e.repo.FindResource(ctx, other.ID))
	if !slices.Equal(kept.MemberOf, []shelfmark.ID{coll.ID}) {
		t.Fatalf("the other work's collections: %v", kept.MemberOf)
	}

	// a collection: its set and its members' edges go, the members stay
	res, err = e.repo.Purge(ctx, coll.ID, "withdrawn", shelfmark.PurgeOptions{})
	if err != nil || res.Resources != 1 {
		t.Fatalf("purge the collection: %+v %v", res, err)
	}
	kept = rs(t)(e.repo.FindResource(ctx, other.ID))
	if len(kept.MemberOf) != 0 {
		t.Fatalf("member of a purged collection: %v", kept.MemberOf)
	}
	if err := e.store.View(ctx, func(tx shelfmark.ReadTx) error {
		sets, err := tx.OAISetsByKey(ctx, []int64{ck})
		if err != nil || len(sets) != 0 {
			return fmt.Errorf("oai set left: %v %v", sets, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
