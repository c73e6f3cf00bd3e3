package storagetest

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// testBulkWrites drives the writes that send many rows in one bulk
// statement straight through a transaction, with the cases each must
// keep: rows that repeat or exist already, deletions of rows that are not
// there, NULLs, and filters that are empty. With RunBulk (PostgreSQL's
// COPY from two rows) the same calls take the COPY paths, a collision
// inside a savepoint included.
func testBulkWrites(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	embargo := at.Add(time.Hour)
	rows := make([]*shelfmark.ResourceRow, 6)
	for i := range rows {
		rows[i] = &shelfmark.ResourceRow{Key: int64(9001 + i), Kind: shelfmark.KindWork, Visibility: shelfmark.Public,
			Version: 1, Seq: 1, Created: at, Modified: at, Effective: shelfmark.Access{Visibility: shelfmark.Public}}
	}
	rows[0].Kind, rows[1].Embargo, rows[1].Effective.Embargo = shelfmark.KindCollection, &embargo, &embargo
	rows[2].Kind, rows[2].Parent, rows[2].Position = shelfmark.KindFile, rows[1].Key, 1
	rows[3].Kind, rows[3].Parent, rows[3].Position = shelfmark.KindFile, rows[1].Key, 2
	coll, work, f1, f2 := rows[0].Key, rows[1].Key, rows[2].Key, rows[3].Key
	update(t, e, func(tx shelfmark.WriteTx) error { return tx.InsertResources(ctx, rows) })
	// a key that exists fails the write
	if err := e.store.Update(ctx, func(tx shelfmark.WriteTx) error {
		return tx.InsertResources(ctx, rows[:1])
	}); err == nil {
		t.Error("a resource inserted twice")
	}
	view(t, e, func(tx shelfmark.ReadTx) error {
		got, err := tx.Resources(ctx, []int64{work, f1})
		if err != nil {
			return err
		}
		slices.SortFunc(got, func(a, b *shelfmark.ResourceRow) int { return int(a.Key - b.Key) })
		if len(got) != 2 || got[0].Embargo == nil || !got[0].Embargo.Equal(embargo) || got[0].Parent != 0 || got[1].Parent != work ||
			got[1].Position != 1 || got[0].Effective.Embargo == nil || got[1].Embargo != nil {
			t.Errorf("rows read back: %+v, %+v", got[0], got[1])
		}
		return nil
	})
	// an update of a missing row is ENOTFOUND
	if err := e.store.Update(ctx, func(tx shelfmark.WriteTx) error {
		return tx.UpdateResource(ctx, &shelfmark.ResourceRow{Key: 1 << 40, Modified: at})
	}); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
		t.Errorf("update of a missing row: %v", err)
	}

	// memberships: repeats and an existing edge are left as they are;
	// deleting edges that are not there deletes nothing else
	others := []int64{rows[4].Key, rows[5].Key, work}
	update(t, e, func(tx shelfmark.WriteTx) error {
		if err := tx.InsertMemberships(ctx, []shelfmark.Membership{{Collection: coll, Member: work}}); err != nil {
			return err
		}
		var ms []shelfmark.Membership
		for _, m := range append(others, others...) {
			ms = append(ms, shelfmark.Membership{Collection: coll, Member: m})
		}
		return tx.InsertMemberships(ctx, ms)
	})
	update(t, e, func(tx shelfmark.WriteTx) error {
		return tx.DeleteMemberships(ctx, []shelfmark.Membership{{Collection: coll, Member: rows[4].Key}, {Collection: coll, Member: f1},
			{Collection: work, Member: rows[5].Key}})
	})
	view(t, e, func(tx shelfmark.ReadTx) error {
		of, err := tx.MemberOfMany(ctx, others)
		if err != nil {
			return err
		}
		want := map[int64][]int64{rows[5].Key: {coll}, work: {coll}}
		if !reflect.DeepEqual(of, want) {
			t.Errorf("memberships after the deletion: %v, want %v", of, want)
		}
		return nil
	})

	// fields: upserts and deletions in one call
	title := func(s string) []shelfmark.Term { return []shelfmark.Term{shelfmark.NewLiteral(s)} }
	update(t, e, func(tx shelfmark.WriteTx) error {
		return tx.PutFields(ctx, []int64{work, work, coll}, []shelfmark.Field{{Predicate: shelfmark.NSDC + "title", Objects: title("a")},
			{Predicate: shelfmark.NSDC + "creator", Objects: title("b")}, {Predicate: shelfmark.NSDC + "title", Objects: title("c")}})
	})
	update(t, e, func(tx shelfmark.WriteTx) error {
		return tx.PutFields(ctx, []int64{work, work, coll, coll}, []shelfmark.Field{{Predicate: shelfmark.NSDC + "title", Objects: title("a2")},
			{Predicate: shelfmark.NSDC + "creator"}, {Predicate: shelfmark.NSDC + "title"}, {Predicate: shelfmark.NSDC + "subject"}})
	})
	view(t, e, func(tx shelfmark.ReadTx) error {
		of, err := tx.FieldsOf(ctx, []int64{work, coll})
		if err != nil {
			return err
		}
		if fs := of[work]; len(fs) != 1 || fs[0].Predicate != shelfmark.NSDC+"title" || fs[0].Objects[0].Value != "a2" || len(of[coll]) != 0 {
			t.Errorf("fields after the upsert: %+v", of)
		}
		return nil
	})

	// files, with and without a format, then formats for both
	update(t, e, func(tx shelfmark.WriteTx) error {
		return tx.InsertFiles(ctx, []int64{f1, f2}, []*shelfmark.File{
			{Name: "a.tif", MediaType: "image/tiff", Size: 3, SHA256: sha(1), Use: "original"},
			{Name: "b.jpg", MediaType: "image/jpeg", Size: 4, SHA256: sha(2), Use: "original", Format: &shelfmark.Format{PRONOM: "fmt/43", Width: 8}},
		})
	})
	view(t, e, func(tx shelfmark.ReadTx) error {
		a, err := tx.File(ctx, f1)
		if err != nil {
			return err
		}
		b, err := tx.File(ctx, f2)
		if err != nil {
			return err
		}
		if a == nil || a.Format != nil || a.Name != "a.tif" || b == nil || b.Format == nil || b.Format.PRONOM != "fmt/43" || b.Format.Width != 8 {
			t.Errorf("files read back: %+v, %+v", a, b)
		}
		return nil
	})
	update(t, e, func(tx shelfmark.WriteTx) error {
		return tx.SetFileFormats(ctx, []int64{f1, f2}, []*shelfmark.Format{{PRONOM: "fmt/353", Name: "TIFF", Pages: 2},
			{PRONOM: "fmt/44", Version: "1.02", Height: 9}})
	})
	view(t, e, func(tx shelfmark.ReadTx) error {
		for key, want := range map[int64]shelfmark.Format{f1: {PRONOM: "fmt/353", Name: "TIFF", Pages: 2}, f2: {PRONOM: "fmt/44", Version: "1.02", Height: 9}} {
			f, err := tx.File(ctx, key)
			if err != nil {
				return err
			}
			if f == nil || f.Format == nil || *f.Format != want {
				t.Errorf("format of %d: %+v, want %+v", key, f, want)
			}
		}
		return nil
	})

	// jobs: a (queue, resource) queued twice is one job; the filters of
	// Jobs and RetryJobs, empty or not
	update(t, e, func(tx shelfmark.WriteTx) error {
		return tx.EnqueueJobs(ctx, []shelfmark.NewJob{{Queue: shelfmark.QueueCharacterize, Resource: f1},
			{Queue: shelfmark.QueueCharacterize, Resource: f1}, {Queue: shelfmark.QueueCharacterize, Resource: f2},
			{Queue: shelfmark.QueueDerive, Resource: f1}}, at)
	})
	var jobs []*shelfmark.Job
	view(t, e, func(tx shelfmark.ReadTx) (err error) {
		jobs, err = tx.Jobs(ctx, shelfmark.JobFilter{Limit: 10})
		if err != nil {
			return err
		}
		char, err := tx.Jobs(ctx, shelfmark.JobFilter{Queue: shelfmark.QueueCharacterize, State: shelfmark.JobQueued, Limit: 10})
		if err != nil {
			return err
		}
		none, err := tx.Jobs(ctx, shelfmark.JobFilter{State: shelfmark.JobFailed, Limit: 10})
		if err != nil {
			return err
		}
		held, err := tx.JobHeld(ctx, jobs[0].ID, "w", 0)
		if len(jobs) != 3 || len(char) != 2 || len(none) != 0 || held || err != nil {
			t.Errorf("jobs %d, of a queue %d, failed %d, held %v %v", len(jobs), len(char), len(none), held, err)
		}
		return nil
	})
	update(t, e, func(tx shelfmark.WriteTx) error {
		for _, j := range jobs {
			if err := tx.FailJob(ctx, j.ID, "x"); err != nil {
				return err
			}
		}
		for _, c := range []struct {
			queue string
			ids   []int64
			want  int64
		}{
			{shelfmark.QueueDerive, []int64{jobs[0].ID, jobs[1].ID}, 0}, // neither of the ids is of that queue
			{"", []int64{jobs[0].ID}, 1},
			{shelfmark.QueueCharacterize, nil, 1},
			{"", nil, 1},
			{"", nil, 0},
		} {
			if n, err := tx.RetryJobs(ctx, c.queue, c.ids, at); err != nil || n != c.want {
				return fmt.Errorf("retry %q %v: %d, want %d (%v)", c.queue, c.ids, n, c.want, err)
			}
		}
		return tx.DeleteJobs(ctx, []int64{jobs[0].ID, jobs[2].ID, 1 << 40})
	})
	view(t, e, func(tx shelfmark.ReadTx) error {
		left, err := tx.Jobs(ctx, shelfmark.JobFilter{State: shelfmark.JobQueued, Limit: 10})
		if err != nil {
			return err
		}
		if len(left) != 1 || left[0].ID != jobs[1].ID {
			t.Errorf("jobs left: %+v", left)
		}
		return nil
	})

	// grants are replaced, repeats kept once
	for _, gs := range [][]shelfmark.Grant{
		{{Principal: "user:1", Role: shelfmark.RoleCurator}, {Principal: "user:1", Role: shelfmark.RoleCurator}, {Principal: "group:x", Role: shelfmark.RoleViewer}},
		{{Principal: "user:2", Role: shelfmark.RoleViewer}},
	} {
		update(t, e, func(tx shelfmark.WriteTx) error { return tx.SetGrants(ctx, work, gs) })
	}
	view(t, e, func(tx shelfmark.ReadTx) error {
		gs, err := tx.GrantsOn(ctx, []int64{work})
		if err != nil {
			return err
		}
		if len(gs) != 1 || gs[0].Principal != "user:2" || gs[0].Resource != work {
			t.Errorf("grants after the replacement: %+v", gs)
		}
		return nil
	})

	// OAI sets: a later set of a key wins, and two sets may swap specs
	update(t, e, func(tx shelfmark.WriteTx) error {
		return tx.PutOAISets(ctx, []shelfmark.OAISet{{Key: coll, Spec: "a", Name: "A"}, {Key: work, Spec: "b", Name: "B"}, {Key: coll, Spec: "c", Name: "C"}})
	})
	update(t, e, func(tx shelfmark.WriteTx) error {
		return tx.PutOAISets(ctx, []shelfmark.OAISet{{Key: coll, Spec: "b", Name: "B2"}, {Key: work, Spec: "c", Name: "C2"}})
	})
	view(t, e, func(tx shelfmark.ReadTx) error {
		sets, err := tx.OAISetsByKey(ctx, []int64{coll, work})
		if err != nil {
			return err
		}
		want := []shelfmark.OAISet{{Key: coll, Spec: "b", Name: "B2"}, {Key: work, Spec: "c", Name: "C2"}}
		if !reflect.DeepEqual(sets, want) {
			t.Errorf("sets: %+v, want %+v", sets, want)
		}
		return nil
	})
}
