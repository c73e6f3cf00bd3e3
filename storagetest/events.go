package storagetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// testPreservationEvents: PREMIS events are stored and read back by
// resource, oldest first, in pages of one statement; a resource's event
// log adds its ingestion, characterization and deletion, as the caller
// may read the resource (ENOTFOUND otherwise); fixity states are kept per
// copy and item (a check replaces the last one), paged by key, the failed
// ones alone when asked; the damaged files are found and counted; the
// pass's progress is kept.
func testPreservationEvents(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	pe, ok := e.store.(shelfmark.PreservationEvents)
	if !ok {
		t.Fatalf("%T does not implement shelfmark.PreservationEvents", e.store)
	}
	ctx := context.Background()
	anon := as(shelfmark.Anonymous())
	sha := func(i int) string { return fmt.Sprintf("%064x", i) }
	w := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
	fs := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID}))
	file := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID,
		File: &shelfmark.File{Name: "f.tif", MediaType: "image/tiff", Size: 10, SHA256: sha(1), Use: "original",
			Format: &shelfmark.Format{PRONOM: "fmt/353", Name: "Tagged Image File Format"}}}))
	private := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private}))
	key := func(id shelfmark.ID) int64 {
		k, err := e.repo.IDs().Key(id)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	fk := key(file.ID)

	// 5 stored events of the file, one of another resource
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC)
	var events []shelfmark.PreservationEvent
	for i := range 5 {
		ev := shelfmark.PreservationEvent{Resource: fk, Type: shelfmark.EventFixityCheck, At: t0.Add(time.Duration(i) * time.Hour),
			Agent: shelfmark.Agent(), Outcome: shelfmark.OutcomeSuccess, Detail: fmt.Sprintf("check %d", i),
			Copy: shelfmark.CopyStore, Algorithm: "sha256", Digest: sha(1)}
		if i == 3 {
			ev.Type, ev.Outcome, ev.Copy = shelfmark.EventRecovery, shelfmark.OutcomeSuccess, shelfmark.CopyOCFL
		}
		events = append(events, ev)
	}
	if err := pe.AddEvents(ctx, append(events, shelfmark.PreservationEvent{Resource: key(private.ID), Type: shelfmark.EventFixityCheck,
		At: t0, Agent: "x", Outcome: shelfmark.OutcomeFailure, Copy: shelfmark.CopyOCFL})); err != nil {
		t.Fatal(err)
	}
	var got []shelfmark.PreservationEvent
	for after, n := int64(0), 0; ; n++ {
		var page []shelfmark.PreservationEvent
		calls := e.rec.capture(func() {
			var err error
			page, err = pe.Events(ctx, fk, after, 2)
			if err != nil {
				t.Fatal(err)
			}
		})
		if len(calls) != 1 || len(page) > 2 || n > 5 {
			t.Fatalf("a page of events: %d events in %d statements", len(page), len(calls))
		}
		got = append(got, page...)
		if len(page) < 2 {
			break
		}
		after = page[len(page)-1].ID
	}
	if len(got) != 5 {
		t.Fatalf("%d events of the file, want 5: %+v", len(got), got)
	}
	for i, g := range got {
		want := events[i]
		want.ID = g.ID
		if g != want {
			t.Errorf("event %d: %+v, want %+v", i, g, want)
		}
		if i > 0 && g.ID <= got[i-1].ID {
			t.Errorf("event ids do not rise: %d after %d", g.ID, got[i-1].ID)
		}
	}

	// the log: ingestion and characterization first (they are older), then
	// the stored events; paged
	log, err := e.repo.ResourceEvents(anon, file.ID, 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range log.Events {
		types = append(types, ev.Type)
	}
	if want := []string{shelfmark.EventIngestion, shelfmark.EventCharacterization, shelfmark.EventFixityCheck, shelfmark.EventFixityCheck,
		shelfmark.EventFixityCheck}; !slices.Equal(types, want) || log.Next == 0 {
		t.Errorf("the file's log: %v (next %d), want %v and a next page", types, log.Next, want)
	}
	log2, err := e.repo.ResourceEvents(anon, file.ID, log.Next, 3)
	if err != nil || len(log2.Events) != 2 || log2.Events[0].Type != shelfmark.EventRecovery || log2.Next != 0 {
		t.Errorf("the second page: %+v, %v", log2, err)
	}
	// not readable: not found, as the resource itself
	if _, err := e.repo.ResourceEvents(anon, private.ID, 0, 10); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
		t.Errorf("a private work's events for anonymous: %v, want not found", err)
	}
	if log, err := e.repo.ResourceEvents(ctx, private.ID, 0, 10); err != nil || len(log.Events) != 2 {
		t.Errorf("a private work's events for the system: %+v, %v", log, err)
	}
	// a tombstone: its deletion, after its ingestion (the stored event is
	// dated later)
	if err := e.repo.DeleteResource(ctx, private.ID, 0); err != nil {
		t.Fatal(err)
	}
	if log, err := e.repo.ResourceEvents(ctx, private.ID, 0, 10); err != nil || len(log.Events) != 3 ||
		log.Events[1].Type != shelfmark.EventDeletion || log.Resource.Deleted == nil {
		t.Errorf("a deleted work's events: %+v, %v", log, err)
	}
	if _, err := e.repo.ResourceEvents(anon, "nope!", 0, 10); err == nil {
		t.Error("events of a malformed id: no error")
	}

	// fixity states: a later check replaces the earlier
	at := t0.Add(24 * time.Hour)
	states := []shelfmark.FixityState{
		{Resource: fk, Copy: shelfmark.CopyStore, Item: sha(1), Checked: t0, Outcome: shelfmark.FixityOK},
		{Resource: fk, Copy: shelfmark.CopyOCFL, Item: "v1/content/files/a", Checked: t0, Outcome: shelfmark.FixityOK},
		{Resource: fk + 1, Copy: shelfmark.CopyStore, Item: sha(2), Checked: t0, Outcome: shelfmark.FixityRepaired, Detail: "rewritten from the OCFL copy"},
		{Resource: fk + 2, Copy: shelfmark.CopyOCFL, Item: "v2/content/files/b", Checked: t0, Outcome: shelfmark.FixityDamaged, Damaged: true},
		{Resource: fk + 2, Copy: shelfmark.CopyStore, Item: sha(3), Checked: t0, Outcome: shelfmark.FixityDamaged, Damaged: true},
	}
	if err := pe.PutFixity(ctx, states); err != nil {
		t.Fatal(err)
	}
	states[1].Checked, states[1].Outcome, states[1].Damaged, states[1].Detail = at, shelfmark.FixityDamaged, true, "sha512 differs"
	if err := pe.PutFixity(ctx, states[1:2]); err != nil {
		t.Fatal(err)
	}
	walk := func(failed bool) []shelfmark.FixityState {
		var out []shelfmark.FixityState
		var after shelfmark.FixityState
		for n := 0; ; n++ {
			page, err := pe.FixityStates(ctx, after, failed, 2)
			if err != nil || n > 5 {
				t.Fatal(err)
			}
			out = append(out, page...)
			if len(page) < 2 {
				return out
			}
			after = page[len(page)-1]
		}
	}
	all := walk(false)
	want := []shelfmark.FixityState{states[1], states[0], states[2], states[3], states[4]} // by resource, copy ("ocfl" < "store"), item
	if !slices.Equal(all, want) {
		t.Errorf("the states:\n got %+v\nwant %+v", all, want)
	}
	if failed := walk(true); !slices.Equal(failed, []shelfmark.FixityState{states[1], states[2], states[3], states[4]}) {
		t.Errorf("the failed states: %+v", failed)
	}
	dam, err := pe.DamagedFiles(ctx, []int64{fk, fk + 1, fk + 2, fk + 3})
	if err != nil || len(dam) != 2 || !dam[fk] || !dam[fk+2] {
		t.Errorf("damaged files: %v, %v", dam, err)
	}
	if n, err := pe.CountDamaged(ctx); err != nil || n != 2 {
		t.Errorf("damaged count: %d, %v; want 2", n, err)
	}
	if d, err := e.repo.FileDamaged(ctx, file.ID); err != nil || !d {
		t.Errorf("FileDamaged: %v, %v", d, err)
	}
	// repaired: no longer damaged
	states[1].Outcome, states[1].Damaged = shelfmark.FixityRepaired, false
	if err := pe.PutFixity(ctx, states[1:2]); err != nil {
		t.Fatal(err)
	}
	if d, err := e.repo.FileDamaged(ctx, file.ID); err != nil || d {
		t.Errorf("FileDamaged after a repair: %v, %v", d, err)
	}

	// the originals in the content store: not derivatives, external files
	// or deleted files; paged by key
	rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID,
		File: &shelfmark.File{Name: "t.jpg", MediaType: "image/jpeg", Size: 3, SHA256: sha(9), Use: shelfmark.UseThumbnail}}))
	rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID,
		File: &shelfmark.File{Name: "x", MediaType: "image/jp2", Size: -1, Use: "original", ExternalURL: "https://images.example.org/x.jp2"}}))
	second := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID,
		File: &shelfmark.File{Name: "g.tif", MediaType: "image/tiff", Size: 20, SHA256: sha(5), SHA512: "ab", Use: "original"}}))
	gone := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID,
		File: &shelfmark.File{Name: "h.tif", MediaType: "image/tiff", Size: 20, SHA256: sha(6), Use: "original"}}))
	if err := e.repo.DeleteResource(ctx, gone.ID, 0); err != nil {
		t.Fatal(err)
	}
	first, err := pe.OriginalFiles(ctx, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	rest, err := pe.OriginalFiles(ctx, first[0].Key, 10)
	if err != nil {
		t.Fatal(err)
	}
	fsKey := key(fs.ID)
	if wantFiles := []shelfmark.StoredFile{{Key: fk, FileSet: fsKey, SHA256: sha(1), Size: 10},
		{Key: key(second.ID), FileSet: fsKey, SHA256: sha(5), SHA512: "ab", Size: 20}}; !slices.Equal(append(first, rest...), wantFiles) {
		t.Errorf("the originals: %+v, want %+v", append(first, rest...), wantFiles)
	}

	// the pass: none yet, then what was saved
	if p, err := pe.FixityPass(ctx); err != nil || p != (shelfmark.FixityPass{}) {
		t.Errorf("no pass yet: %+v, %v", p, err)
	}
	p := shelfmark.FixityPass{Started: t0, Cursor: "store:42", Files: 7, Bytes: 1 << 40, Damaged: 1, Repaired: 2}
	if err := pe.SaveFixityPass(ctx, p); err != nil {
		t.Fatal(err)
	}
	p.Finished, p.Cursor = at, "ocfl:abc/def"
	if err := pe.SaveFixityPass(ctx, p); err != nil {
		t.Fatal(err)
	}
	if got, err := pe.FixityPass(ctx); err != nil || got != p {
		t.Errorf("the pass: %+v, %v; want %+v", got, err, p)
	}
}
