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

// The OAI-PMH view (oai.go) and the change feed its projector follows,
// driven through Storage.View and Storage.Update.

func view(t *testing.T, e *env, fn func(shelfmark.ReadTx) error) {
	t.Helper()
	if err := e.store.View(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func update(t *testing.T, e *env, fn func(shelfmark.WriteTx) error) {
	t.Helper()
	if err := e.store.Update(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// oaiBase is the datestamp of seq 0 in the test views; a row's datestamp
// is oaiBase plus half its seq, in seconds, so pairs of rows share one.
var oaiBase = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func oaiDatestamp(seq int64) time.Time { return oaiBase.Add(time.Duration(seq/2) * time.Second) }

func oaiRec(prefix string, seq, key int64, sets ...int64) *shelfmark.OAIRecord {
	return &shelfmark.OAIRecord{Prefix: prefix, Seq: seq, Key: key, Datestamp: oaiDatestamp(seq), Sets: sets,
		Payload: []byte(fmt.Sprintf("<%s key=%d seq=%d/>", prefix, key, seq))}
}

// oaiModel is what the view should hold: the live rows by (key, prefix).
type oaiModel map[[2]any]*shelfmark.OAIRecord

func (m oaiModel) put(recs ...*shelfmark.OAIRecord) {
	for _, r := range recs {
		m[[2]any{r.Key, r.Prefix}] = r
	}
}

// list returns the model's rows of l, by seq, ignoring Limit.
func (m oaiModel) list(l shelfmark.OAIList) []int64 {
	var seqs []int64
	for _, r := range m {
		if r.Prefix != l.Prefix || r.Seq <= l.After || r.Seq > l.Max {
			continue
		}
		if len(l.Sets) > 0 && !slices.ContainsFunc(r.Sets, func(s int64) bool { return slices.Contains(l.Sets, s) }) {
			continue
		}
		seqs = append(seqs, r.Seq)
	}
	slices.Sort(seqs)
	return seqs
}

func (m oaiModel) bySeq(seq int64) *shelfmark.OAIRecord {
	for _, r := range m {
		if r.Seq == seq {
			return r
		}
	}
	return nil
}

// walk pages through a list with l.Limit and returns every row read.
func walk(t *testing.T, e *env, l shelfmark.OAIList) []*shelfmark.OAIRecord {
	t.Helper()
	var out []*shelfmark.OAIRecord
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatalf("list %+v does not end", l)
		}
		var page []*shelfmark.OAIRecord
		view(t, e, func(tx shelfmark.ReadTx) (err error) {
			page, err = tx.OAIRecords(context.Background(), l)
			return err
		})
		if len(page) > l.Limit {
			t.Fatalf("page of %d rows for limit %d", len(page), l.Limit)
		}
		out = append(out, page...)
		if len(page) < l.Limit {
			return out
		}
		l.After = page[len(page)-1].Seq
	}
}

func seqsOf(recs []*shelfmark.OAIRecord) []int64 {
	out := make([]int64, len(recs))
	for i, r := range recs {
		out[i] = r.Seq
	}
	return out
}

// checkLists compares every list of the view (both prefixes, with and
// without payloads, set lists) with the model, paged by 3, and the tallies.
func checkLists(t *testing.T, e *env, m oaiModel, maxSeq int64) {
	t.Helper()
	many := []int64{300}
	for k := int64(1000); k < 1200; k++ { // more sets than one SQLite statement takes
		many = append(many, k)
	}
	setLists := [][]int64{nil, {100}, {200}, {300}, {100, 200}, {200, 100, 300}, {999}, many}
	for _, prefix := range []string{"oai_dc", "marcxml", "none"} {
		for _, sets := range setLists {
			for _, payload := range []bool{true, false} {
				l := shelfmark.OAIList{Prefix: prefix, Sets: sets, Max: maxSeq, Limit: 3, Payload: payload}
				got := walk(t, e, l)
				want := m.list(l)
				if !slices.Equal(seqsOf(got), want) {
					t.Fatalf("%s sets %v: rows %v, want %v", prefix, sets, seqsOf(got), want)
				}
				for _, r := range got {
					w := m.bySeq(r.Seq)
					if r.Key != w.Key || r.Prefix != w.Prefix || !r.Datestamp.Equal(w.Datestamp) || r.Datestamp.Location() != time.UTC ||
						r.Deleted != w.Deleted || !slices.Equal(r.Sets, w.Sets) {
						t.Fatalf("row %d: %+v, want %+v", r.Seq, r, w)
					}
					if payload && string(r.Payload) != string(w.Payload) || !payload && len(r.Payload) != 0 {
						t.Fatalf("row %d (payload %v): payload %q, want %q", r.Seq, payload, r.Payload, w.Payload)
					}
				}
				// a window inside the list
				if len(want) > 2 {
					l.After, l.Max = want[0], want[len(want)-2]
					if got := seqsOf(walk(t, e, l)); !slices.Equal(got, want[1:len(want)-1]) {
						t.Fatalf("%s sets %v in (%d, %d]: %v, want %v", prefix, sets, l.After, l.Max, got, want[1:len(want)-1])
					}
				}
			}
		}
		// the tallies kept for the whole format and for each set
		for _, set := range []int64{0, 100, 200, 300, 999, 1000} {
			var got shelfmark.OAITally
			view(t, e, func(tx shelfmark.ReadTx) (err error) {
				got, err = tx.OAICount(context.Background(), prefix, set)
				return err
			})
			l := shelfmark.OAIList{Prefix: prefix, Max: maxSeq}
			if set != 0 {
				l.Sets = []int64{set}
			}
			var want shelfmark.OAITally
			if seqs := m.list(l); len(seqs) > 0 {
				want = shelfmark.OAITally{N: int64(len(seqs)), First: seqs[0], Last: seqs[len(seqs)-1]}
			}
			if got != want {
				t.Fatalf("%s set %d: tally %+v, want %+v", prefix, set, got, want)
			}
		}
	}
}

func testOAIRecords(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()

	// an empty view
	view(t, e, func(tx shelfmark.ReadTx) error {
		maxSeq, _, ok, err := tx.OAIBounds(ctx)
		if err != nil || ok || maxSeq != 0 {
			t.Fatalf("bounds of an empty view: %d, %v, %v", maxSeq, ok, err)
		}
		after, max, err := tx.OAISeqRange(ctx, "oai_dc", time.Time{}, time.Time{})
		if err != nil || after != 0 || max != 0 {
			t.Fatalf("seq range of an empty view: (%d, %d], %v", after, max, err)
		}
		recs, err := tx.OAIRecords(ctx, shelfmark.OAIList{Prefix: "oai_dc", Max: 100, Limit: 10})
		if err != nil || len(recs) != 0 {
			t.Fatalf("records of an empty view: %v, %v", recs, err)
		}
		if r, err := tx.OAIRecord(ctx, "oai_dc", 1); r != nil || err != nil {
			t.Fatalf("record of an empty view: %v, %v", r, err)
		}
		return nil
	})

	// keys 1..12 in two formats, seqs 1..24 interleaved; sets: 100 holds
	// the multiples of 3, 200 the even keys, 300 key 7 (and 6 is in 100
	// and 200); key 9 is a tombstone. A stale record of key 1 comes first
	// in the batch and is replaced by the later one.
	m := oaiModel{}
	var batch []*shelfmark.OAIRecord
	batch = append(batch, oaiRec("oai_dc", 900, 1, 300))
	for k := int64(1); k <= 12; k++ {
		var sets []int64
		if k%3 == 0 {
			sets = append(sets, 100)
		}
		if k%2 == 0 {
			sets = append(sets, 200)
		}
		if k == 7 {
			sets = append(sets, 300)
		}
		dc, marc := oaiRec("oai_dc", 2*k-1, k, sets...), oaiRec("marcxml", 2*k, k, sets...)
		if k == 9 {
			dc.Deleted, dc.Payload = true, nil
			marc.Deleted, marc.Payload = true, nil
		}
		batch = append(batch, dc, marc)
	}
	update(t, e, func(tx shelfmark.WriteTx) error { return tx.PutOAIRecords(ctx, batch) })
	m.put(batch...)
	m[[2]any{int64(9), "oai_dc"}].Payload = []byte{}
	m[[2]any{int64(9), "marcxml"}].Payload = []byte{}
	checkLists(t, e, m, 24)

	view(t, e, func(tx shelfmark.ReadTx) error {
		maxSeq, earliest, ok, err := tx.OAIBounds(ctx)
		if err != nil || !ok || maxSeq != 24 || !earliest.Equal(oaiDatestamp(1)) {
			t.Fatalf("bounds: %d, %v, %v, %v", maxSeq, earliest, ok, err)
		}
		r, err := tx.OAIRecord(ctx, "oai_dc", 1)
		if err != nil || r == nil || r.Seq != 1 || string(r.Payload) != string(m.bySeq(1).Payload) {
			t.Fatalf("record 1: %+v, %v", r, err)
		}
		if r, err := tx.OAIRecord(ctx, "mods", 1); r != nil || err != nil {
			t.Fatalf("record 1 in a format it lacks: %+v, %v", r, err)
		}
		return nil
	})

	// replacing rows: key 2's oai_dc row moves from set 200 to set 300 at
	// seq 25, key 4's marcxml row becomes a tombstone at seq 26
	r2, r4 := oaiRec("oai_dc", 25, 2, 300), oaiRec("marcxml", 26, 4)
	r4.Deleted, r4.Payload = true, []byte{}
	update(t, e, func(tx shelfmark.WriteTx) error { return tx.PutOAIRecords(ctx, []*shelfmark.OAIRecord{r2, r4}) })
	m.put(r2, r4)
	checkLists(t, e, m, 26)
	view(t, e, func(tx shelfmark.ReadTx) error {
		rows, err := tx.OAIRecordsOf(ctx, []int64{2})
		if err != nil || len(rows) != 2 || rows[0].Prefix != "marcxml" || rows[1].Prefix != "oai_dc" || rows[1].Seq != 25 ||
			len(rows[0].Payload)+len(rows[1].Payload) != 0 || !slices.Equal(rows[1].Sets, []int64{300}) {
			t.Fatalf("records of 2: %+v, %v", rows, err)
		}
		if rows, err := tx.OAIRecordsOf(ctx, []int64{99}); err != nil || len(rows) != 0 {
			t.Fatalf("records of 99: %+v, %v", rows, err)
		}
		// several keys at once: by key, then prefix
		rows, err = tx.OAIRecordsOf(ctx, []int64{4, 99, 2})
		var got []string
		for _, r := range rows {
			got = append(got, fmt.Sprintf("%d/%s", r.Key, r.Prefix))
		}
		if err != nil || !slices.Equal(got, []string{"2/marcxml", "2/oai_dc", "4/marcxml", "4/oai_dc"}) {
			t.Fatalf("records of 4, 99 and 2: %v, %v", got, err)
		}
		r, err := tx.OAIRecord(ctx, "marcxml", 4)
		if err != nil || r == nil || r.Seq != 26 || !r.Deleted || len(r.Payload) != 0 {
			t.Fatalf("tombstone of 4: %+v, %v", r, err)
		}
		return nil
	})

	// datestamp windows turn into seq ranges that hold exactly the rows of
	// the window; from and until may carry fractions of seconds
	sec := func(n int) time.Time { return oaiBase.Add(time.Duration(n) * time.Second) }
	windows := [][2]time.Time{
		{{}, {}}, {sec(0), {}}, {{}, sec(5)}, {sec(3), sec(5)}, {sec(3), sec(3)},
		{sec(2).Add(time.Millisecond), sec(6).Add(-time.Millisecond)},
		{sec(100), {}}, {{}, sec(-1)}, {sec(100), sec(200)}, {sec(-10), sec(-5)}, {sec(7), sec(4)},
		{sec(-10), sec(100)},
	}
	for _, prefix := range []string{"oai_dc", "marcxml", "none"} {
		for _, w := range windows {
			var after, max int64
			view(t, e, func(tx shelfmark.ReadTx) (err error) {
				after, max, err = tx.OAISeqRange(ctx, prefix, w[0], w[1])
				return err
			})
			var want []int64
			for _, r := range m {
				if r.Prefix == prefix && (w[0].IsZero() || !r.Datestamp.Before(w[0])) && (w[1].IsZero() || !r.Datestamp.After(w[1])) {
					want = append(want, r.Seq)
				}
			}
			slices.Sort(want)
			got := m.list(shelfmark.OAIList{Prefix: prefix, After: after, Max: max})
			if !slices.Equal(got, want) {
				t.Fatalf("%s window %v: seqs (%d, %d] hold %v, want %v", prefix, w, after, max, got, want)
			}
			if w[0].IsZero() && after != 0 || w[1].IsZero() && max != 26 {
				t.Fatalf("%s window %v: (%d, %d] is not open", prefix, w, after, max)
			}
		}
	}
}

func testOAISets(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	sets := []shelfmark.OAISet{
		{Key: 1, Spec: "a", Name: "A"}, {Key: 2, Spec: "a:b", Name: "A/B"}, {Key: 3, Spec: "a:b:c", Name: "A/B/C"},
		{Key: 4, Spec: "ab", Name: "AB"}, {Key: 5, Spec: "ab:x", Name: "AB/X"}, {Key: 6, Spec: "a0", Name: "A0"},
		{Key: 7, Spec: "a-b", Name: "A-B"}, {Key: 8, Spec: "Ä", Name: "Umlaut"},
	}
	update(t, e, func(tx shelfmark.WriteTx) error { return tx.PutOAISets(ctx, sets) })
	tree := func(spec string) []int64 {
		var keys []int64
		view(t, e, func(tx shelfmark.ReadTx) (err error) {
			keys, err = tx.OAISetTree(ctx, spec)
			return err
		})
		slices.Sort(keys)
		return keys
	}
	for spec, want := range map[string][]int64{
		"a": {1, 2, 3}, "a:b": {2, 3}, "a:b:c": {3}, "ab": {4, 5}, "ab:x": {5}, "a0": {6}, "Ä": {8},
		"zz": nil, "a:": nil, "": nil, "b": nil,
	} {
		if got := tree(spec); !slices.Equal(got, want) {
			t.Fatalf("tree %q = %v, want %v", spec, got, want)
		}
	}
	view(t, e, func(tx shelfmark.ReadTx) error {
		page, err := tx.OAISets(ctx, 0, 3)
		if err != nil || !reflect.DeepEqual(page, sets[:3]) {
			t.Fatalf("sets page 1: %v, %v", page, err)
		}
		page, err = tx.OAISets(ctx, 3, 100)
		if err != nil || !reflect.DeepEqual(page, sets[3:]) {
			t.Fatalf("sets page 2: %v, %v", page, err)
		}
		got, err := tx.OAISetsByKey(ctx, []int64{5, 2, 99})
		slices.SortFunc(got, func(a, b shelfmark.OAISet) int { return int(a.Key - b.Key) })
		if err != nil || !reflect.DeepEqual(got, []shelfmark.OAISet{sets[1], sets[4]}) {
			t.Fatalf("sets by key: %v, %v", got, err)
		}
		return nil
	})
	// specs change hands within one call (a collection moved); the later
	// of two puts of one key wins
	update(t, e, func(tx shelfmark.WriteTx) error {
		return tx.PutOAISets(ctx, []shelfmark.OAISet{
			{Key: 1, Spec: "ab", Name: "was A"}, {Key: 4, Spec: "a", Name: "was AB"},
			{Key: 9, Spec: "n", Name: "first"}, {Key: 9, Spec: "new", Name: "New"},
		})
	})
	if got := tree("a"); !slices.Equal(got, []int64{2, 3, 4}) {
		t.Fatalf("tree a after the swap: %v", got)
	}
	if got := tree("ab"); !slices.Equal(got, []int64{1, 5}) {
		t.Fatalf("tree ab after the swap: %v", got)
	}
	if got := tree("new"); !slices.Equal(got, []int64{9}) || tree("n") != nil {
		t.Fatalf("tree new: %v", got)
	}
	// a spec that another set keeps is refused, and changes nothing
	err := e.store.Update(ctx, func(tx shelfmark.WriteTx) error {
		return tx.PutOAISets(ctx, []shelfmark.OAISet{{Key: 10, Spec: "new", Name: "clash"}})
	})
	if err == nil {
		t.Fatal("two sets with one spec")
	}
	update(t, e, func(tx shelfmark.WriteTx) error { return tx.DeleteOAISets(ctx, []int64{2, 3, 42}) })
	if got := tree("a"); !slices.Equal(got, []int64{4}) {
		t.Fatalf("tree a after deletes: %v", got)
	}
	view(t, e, func(tx shelfmark.ReadTx) error {
		all, err := tx.OAISets(ctx, 0, 100)
		var keys []int64
		for _, s := range all {
			keys = append(keys, s.Key)
		}
		if err != nil || !slices.Equal(keys, []int64{1, 4, 5, 6, 7, 8, 9}) || all[0].Name != "was A" {
			t.Fatalf("sets after deletes: %v, %v", all, err)
		}
		return nil
	})
}

func testCounters(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	counter := func(name string) (v int64) {
		view(t, e, func(tx shelfmark.ReadTx) (err error) {
			v, err = tx.Counter(ctx, name)
			return err
		})
		return v
	}
	if v := counter("oai"); v != 0 {
		t.Fatalf("a counter never set: %d", v)
	}
	update(t, e, func(tx shelfmark.WriteTx) error {
		for i, c := range []struct {
			delta, want int64
		}{{5, 5}, {2, 7}, {-3, 4}} {
			v, err := tx.AddCounter(ctx, "oai", c.delta)
			if err != nil || v != c.want {
				t.Fatalf("add %d (%d): %d, %v; want %d", c.delta, i, v, err, c.want)
			}
		}
		v, err := tx.Counter(ctx, "oai")
		if err != nil || v != 4 {
			t.Fatalf("counter inside the update: %d, %v", v, err)
		}
		return nil
	})
	if v := counter("oai"); v != 4 {
		t.Fatalf("counter after commit: %d", v)
	}
	// a rolled-back addition leaves nothing
	e.store.Update(ctx, func(tx shelfmark.WriteTx) error {
		if _, err := tx.AddCounter(ctx, "oai", 100); err != nil {
			return err
		}
		return fmt.Errorf("roll back")
	})
	if v := counter("oai"); v != 4 {
		t.Fatalf("counter after a rollback: %d", v)
	}
}

func seqsOfRows(rows []*shelfmark.ResourceRow) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r.Seq
	}
	return out
}

func keyOf(t *testing.T, id shelfmark.ID) int64 {
	t.Helper()
	k, err := shelfmark.LegacyIDCodec().Key(id) // the codec of envs made without one
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func testChanges(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	coll := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: []shelfmark.Statement{title("C")}}))
	gone := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))

	// a work of four pages (file sets), in one group (one seq); every page
	// holds an original, pages 2 and 4 also a text file, page 3 two
	ids, err := e.repo.MintIDs(ctx, 1+4+4+3)
	if err != nil {
		t.Fatal(err)
	}
	work := &shelfmark.NewResource{ID: ids[0], Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID, gone.ID}, Metadata: sampleMetadata(6)}
	g := &shelfmark.NewGroup{Resources: []*shelfmark.NewResource{work}}
	next := 5
	file := func(parent shelfmark.ID, name, use string) *shelfmark.NewResource {
		id := ids[next]
		next++
		return &shelfmark.NewResource{ID: id, Kind: shelfmark.KindFile, Parent: parent,
			File: &shelfmark.File{Name: name, MediaType: "text/plain", Size: 1, SHA256: fmt.Sprintf("%064x", next), Use: use}}
	}
	var textNames []string // in page order
	pages := ids[1:5]
	for i, p := range pages {
		g.Resources = append(g.Resources, &shelfmark.NewResource{ID: p, Kind: shelfmark.KindFileSet, Parent: work.ID})
		g.Resources = append(g.Resources, file(p, fmt.Sprintf("p%d.tif", i+1), "original"))
		if i == 1 || i == 2 || i == 3 {
			n := fmt.Sprintf("p%d.txt", i+1)
			g.Resources = append(g.Resources, file(p, n, "text"))
		}
	}
	g.Order = []shelfmark.ID{pages[3], pages[1], pages[2], pages[0]} // pages 4, 2, 3, 1
	textNames = []string{"p4.txt", "p2.txt", "p3.txt"}
	if _, errs := e.repo.CreateGroups(ctx, []*shelfmark.NewGroup{g}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	other := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}}))
	bare := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))

	changes := func(after int64, limit int) []*shelfmark.ResourceRow {
		var rows []*shelfmark.ResourceRow
		view(t, e, func(tx shelfmark.ReadTx) (err error) {
			rows, err = tx.Changes(ctx, after, limit)
			return err
		})
		return rows
	}
	all := changes(0, 1000)
	if len(all) != 2+len(g.Resources)+2 {
		t.Fatalf("%d changes, want %d", len(all), 2+len(g.Resources)+2)
	}
	for i := 1; i < len(all); i++ {
		if all[i].Seq < all[i-1].Seq || all[i].Seq == all[i-1].Seq && all[i].Key <= all[i-1].Key {
			t.Fatalf("changes out of order at %d: %+v after %+v", i, all[i], all[i-1])
		}
	}
	if all[0].Key != keyOf(t, coll.ID) || all[len(all)-1].Key != keyOf(t, bare.ID) {
		t.Fatalf("changes from %d to %d", all[0].Key, all[len(all)-1].Key)
	}
	// any page is the start of the rest of the list, even inside the seq
	// that the group's rows share
	for _, after := range append([]int64{0}, seqsOfRows(all)...) {
		var rest []*shelfmark.ResourceRow
		for _, r := range all {
			if r.Seq > after {
				rest = append(rest, r)
			}
		}
		for _, limit := range []int{1, 2, 5, 100} {
			if got := changes(after, limit); !reflect.DeepEqual(got, rest[:min(limit, len(rest))]) {
				t.Fatalf("changes after %d, limit %d: %d rows, not the first of the %d after it", after, limit, len(got), len(rest))
			}
		}
	}
	if rows := changes(all[len(all)-1].Seq, 10); len(rows) != 0 {
		t.Fatalf("changes after the last: %v", rows)
	}

	// FieldsOf matches Fields, key by key
	keys := []int64{keyOf(t, coll.ID), keyOf(t, work.ID), keyOf(t, bare.ID), 1 << 40}
	view(t, e, func(tx shelfmark.ReadTx) error {
		got, err := tx.FieldsOf(ctx, keys)
		if err != nil {
			return err
		}
		for _, k := range keys {
			want, err := tx.Fields(ctx, k)
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(got[k], want) {
				t.Fatalf("fields of %d: %v, want %v", k, got[k], want)
			}
			if _, ok := got[k]; ok != (len(want) > 0) {
				t.Fatalf("fields of %d present: %v", k, ok)
			}
		}
		// each resource's list is its own: appended to, it leaves the
		// next resource's as it was
		_ = append(got[keys[0]], shelfmark.Field{Predicate: "http://example.org/appended"})
		if want, err := tx.Fields(ctx, keys[1]); err != nil || !reflect.DeepEqual(got[keys[1]], want) {
			t.Fatalf("fields of %d after the fields of %d were appended to: %v, want %v (%v)", keys[1], keys[0], got[keys[1]], want, err)
		}
		return nil
	})

	// MemberOfMany: live collections only
	memberOf := func() map[int64][]int64 {
		var got map[int64][]int64
		view(t, e, func(tx shelfmark.ReadTx) (err error) {
			got, err = tx.MemberOfMany(ctx, []int64{keyOf(t, work.ID), keyOf(t, other.ID), keyOf(t, bare.ID)})
			return err
		})
		return got
	}
	c, gc := keyOf(t, coll.ID), keyOf(t, gone.ID)
	want := map[int64][]int64{keyOf(t, work.ID): {min(c, gc), max(c, gc)}, keyOf(t, other.ID): {c}}
	if got := memberOf(); !reflect.DeepEqual(got, want) {
		t.Fatalf("member of: %v, want %v", got, want)
	}
	if err := e.repo.DeleteResource(ctx, gone.ID, 0); err != nil {
		t.Fatal(err)
	}
	want[keyOf(t, work.ID)] = []int64{c}
	if got := memberOf(); !reflect.DeepEqual(got, want) {
		t.Fatalf("member of, after a collection was deleted: %v, want %v", got, want)
	}

	// FilesOfWorks: in page order, only the use asked for, only live ones
	files := func(use string) map[int64][]*shelfmark.File {
		var got map[int64][]*shelfmark.File
		view(t, e, func(tx shelfmark.ReadTx) (err error) {
			got, err = tx.FilesOfWorks(ctx, []int64{keyOf(t, work.ID), keyOf(t, other.ID)}, use, time.Now())
			return err
		})
		return got
	}
	names := func(fs []*shelfmark.File) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Name)
		}
		return out
	}
	got := files("text")
	if len(got) != 1 || !slices.Equal(names(got[keyOf(t, work.ID)]), textNames) {
		t.Fatalf("text files: %v", got)
	}
	f0 := got[keyOf(t, work.ID)][0]
	view(t, e, func(tx shelfmark.ReadTx) error {
		want, err := tx.File(ctx, keyOf(t, g.Resources[len(g.Resources)-1].ID)) // p4.txt
		if err != nil || !reflect.DeepEqual(f0, want) {
			t.Fatalf("file %+v, want %+v (%v)", f0, want, err)
		}
		return nil
	})
	if got := files("original"); !slices.Equal(names(got[keyOf(t, work.ID)]), []string{"p4.tif", "p2.tif", "p3.tif", "p1.tif"}) {
		t.Fatalf("original files: %v", names(got[keyOf(t, work.ID)]))
	}
	if got := files(shelfmark.UseSource); len(got) != 0 {
		t.Fatalf("source files: %v", got)
	}
	before := all[len(all)-1].Seq
	if err := e.repo.DeleteResource(ctx, pages[1], 0); err != nil { // page 2 and its files
		t.Fatal(err)
	}
	if got := files("text"); !slices.Equal(names(got[keyOf(t, work.ID)]), []string{"p4.txt", "p3.txt"}) {
		t.Fatalf("text files after a page was deleted: %v", names(got[keyOf(t, work.ID)]))
	}
	// the tombstones are changes too, live or not
	del := changes(before+1, 100) // after the collection's deletion
	if len(del) != 3 {
		t.Fatalf("%d changes for a page of two files", len(del))
	}
	for _, r := range del {
		if r.Deleted == nil {
			t.Fatalf("change %+v is not a tombstone", r)
		}
	}

	// AccessEnds: the works and collections whose effective embargo or
	// lease ends in (after, until], keys ascending
	day := func(n int) time.Time { return time.Date(2030, 1, n, 0, 0, 0, 0, time.UTC) }
	var embargoed []int64
	for _, d := range []int{3, 1, 2, 2} {
		until := day(d)
		r := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Authenticated, Embargo: &until}))
		embargoed = append(embargoed, keyOf(t, r.ID))
	}
	// a work with no dates of its own under the work embargoed to day 1
	// (its effective embargo), and a page of it (not a work: left out)
	child := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Parent: e.repo.IDs().Encode(embargoed[1])}))
	rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: child.ID}))
	// a leased collection, whose public view ends on day 2
	leaseEnd := day(2)
	leased := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection, Lease: &leaseEnd}))
	ck, lk := keyOf(t, child.ID), keyOf(t, leased.ID)
	ends := func(after, until time.Time) []int64 {
		var keys []int64
		view(t, e, func(tx shelfmark.ReadTx) (err error) {
			keys, err = tx.AccessEnds(ctx, after, until)
			return err
		})
		return keys
	}
	sorted := func(keys ...int64) []int64 { slices.Sort(keys); return keys }
	for _, c := range []struct {
		after, until time.Time
		want         []int64
	}{
		{day(1), day(3), sorted(embargoed[0], embargoed[2], embargoed[3], lk)},
		{time.Time{}, day(1), sorted(embargoed[1], ck)},
		{day(1).Add(-time.Microsecond), day(2).Add(-time.Microsecond), sorted(embargoed[1], ck)},
		{day(3), day(9), nil},
		{time.Time{}, day(9), sorted(embargoed[0], embargoed[1], embargoed[2], embargoed[3], ck, lk)},
	} {
		if got := ends(c.after, c.until); !slices.Equal(got, c.want) {
			t.Fatalf("access ending in (%v, %v]: %v, want %v", c.after, c.until, got, c.want)
		}
	}
}

// testCostOAI (rule R11): a page of a list deep in a view of a few
// thousand rows runs the same statements, returning the same rows, as its
// first page: without sets, in one set, in several.
func testCostOAI(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	const n = 3000
	for lo := int64(1); lo <= n; lo += 500 {
		var batch []*shelfmark.OAIRecord
		for seq := lo; seq < lo+500; seq++ {
			sets := []int64{1}
			if seq%2 == 0 {
				sets = append(sets, 2)
			}
			if seq%5 == 0 {
				sets = append(sets, 3)
			}
			batch = append(batch, oaiRec("oai_dc", seq, seq, sets...), oaiRec("marcxml", n+seq, seq, sets...))
		}
		// marcxml rows have higher seqs: keep datestamps rising with seq
		update(t, e, func(tx shelfmark.WriteTx) error { return tx.PutOAIRecords(ctx, batch) })
	}
	for _, c := range []struct {
		name string
		sets []int64
	}{{"no set", nil}, {"one set", []int64{2}}, {"two sets", []int64{2, 3}}} {
		for _, payload := range []bool{true, false} {
			l := shelfmark.OAIList{Prefix: "oai_dc", Sets: c.sets, Max: 2 * n, Limit: 10, Payload: payload}
			page := func(after int64) []call {
				l.After = after
				return e.rec.capture(func() {
					view(t, e, func(tx shelfmark.ReadTx) error {
						recs, err := tx.OAIRecords(ctx, l)
						if err == nil && len(recs) != 10 {
							t.Fatalf("%s: page after %d has %d rows", c.name, after, len(recs))
						}
						return err
					})
				})
			}
			sameWork(t, fmt.Sprintf("a page of records, %s, payload %v (page 1 vs seq %d)", c.name, payload, n-100),
				page(0), page(n-100))
		}
	}
}
