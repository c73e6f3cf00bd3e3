package shelfmark

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// counterSearchCheckpoint is the change seq the search indexer has indexed
// up to, kept in the same transaction as the documents it writes, so a
// crash never loses or repeats a change.
const counterSearchCheckpoint = "search_checkpoint"

// counterSearchFacets is the fingerprint of the metadata facets the
// records were indexed with (searchFacetsFingerprint); 0 before any.
const counterSearchFacets = "search_facets_config"

// IndexerOptions configure a SearchIndexer.
type IndexerOptions struct {
	// Batch is how many changes one step reads (default 1,000).
	Batch int
	// Poll is how often Run looks for changes when nobody calls Notify
	// (default 1 s; changes made through another process or server are
	// found this way).
	Poll time.Duration
	// Coalesce is how long Run waits after a notification before it
	// reads the changes, so that those of the next commits join the step
	// (0: DefaultCoalesce; less than 0: none).
	Coalesce time.Duration
	// Logger receives failed steps (Run goes on after them) and progress
	// of long catch-ups; default slog.Default().
	Logger *slog.Logger
	// Facets is the repository's list of search facets, whose metadata
	// facets each record is indexed with (searchfacets.go); nil is
	// DefaultSearchFacets. When it differs from the list the index was
	// made with, the first step starts the index again from the beginning
	// of the change sequence.
	Facets []SearchFacet
}

// SearchIndexer keeps the metadata documents of the search index current:
// it follows the repository's change sequence and, for each changed
// resource, writes the document of a live work or collection (its title
// and the rest of its literal metadata) or, for a tombstone of any kind,
// deletes the resource's documents (and, for a work, those of its pages).
// The text of pages is written by the jobs that extract it, not here.
//
// Visibility is not indexed (queries join the resources table), so a
// change of visibility or an embargo that ends needs no new document.
// Several indexers (one per server) may run against one database: a step
// that finds another indexer was faster rolls back and reads again.
type SearchIndexer struct {
	store Storage
	opts  IndexerOptions
	wake  chan struct{}
	// checked is set once the facets' fingerprint was compared
	// (checkFacets).
	checked bool
}

// NewSearchIndexer returns an indexer of store's changes into its search
// index.
func NewSearchIndexer(store Storage, opts IndexerOptions) *SearchIndexer {
	if opts.Batch <= 0 {
		opts.Batch = 1000
	}
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	if opts.Coalesce == 0 {
		opts.Coalesce = DefaultCoalesce
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Facets == nil {
		opts.Facets = DefaultSearchFacets()
	}
	return &SearchIndexer{store: store, opts: opts, wake: make(chan struct{}, 1)}
}

// Notify tells the indexer that changes were committed; it never blocks.
func (x *SearchIndexer) Notify() {
	select {
	case x.wake <- struct{}{}:
	default:
	}
}

// Run indexes changes as they come until ctx ends, and returns ctx's
// error. A failed catch-up is logged and tried again at the next poll or
// notification.
func (x *SearchIndexer) Run(ctx context.Context) error {
	t := time.NewTicker(x.opts.Poll)
	defer t.Stop()
	for {
		if err := x.catchUp(ctx, true); err != nil && ctx.Err() == nil {
			x.opts.Logger.Error("search: indexing changes", "err", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-x.wake:
			if err := Coalesce(ctx, x.opts.Coalesce); err != nil {
				return err
			}
		case <-t.C:
		}
	}
}

// CatchUp indexes every change committed before it was called.
func (x *SearchIndexer) CatchUp(ctx context.Context) error { return x.catchUp(ctx, false) }

// catchUp steps as CatchUpSteps does; trickle is set by Run's loop.
func (x *SearchIndexer) catchUp(ctx context.Context, trickle bool) error {
	start := time.Now()
	total, err := CatchUpSteps(ctx, x.opts.Batch, trickle, x.Step, func(total int) {
		x.opts.Logger.Info("search: catching up with changes", "changes", total)
	})
	if d := time.Since(start); err == nil && d > 5*time.Second {
		x.opts.Logger.Info("search: index brought up to date", "changes", total, "seconds", d.Seconds())
	}
	return err
}

// errIndexRaced means another indexer advanced the checkpoint first.
var errIndexRaced = errors.New("search: another indexer advanced the index")

// Step indexes the next batch of changes and returns how many it read; 0
// means the index is up to date.
func (x *SearchIndexer) Step(ctx context.Context) (n int, err error) {
	if !x.checked {
		if err := x.checkFacets(ctx); err != nil {
			return 0, fmt.Errorf("search: compare the facets indexed: %w", err)
		}
		x.checked = true
	}
	for attempt := 0; ; attempt++ {
		n, err = x.step(ctx)
		if errors.Is(err, errIndexRaced) && attempt < 3 {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("search: index changes: %w", err)
		}
		return n, nil
	}
}

// checkFacets compares the fingerprint of the indexer's facets with the
// one the index was made with and, when they differ, records the new one
// and moves the checkpoint back to the beginning of the change sequence,
// in one transaction (two counter reads, and two writes when they
// differ): the next steps index every record again, in batches, with
// the new facets. The first start of an index made before facets were
// configurable does the same.
func (x *SearchIndexer) checkFacets(ctx context.Context) error {
	want := searchFacetsFingerprint(x.opts.Facets)
	var same bool
	if err := x.store.View(ctx, func(tx ReadTx) error {
		have, err := tx.Counter(ctx, counterSearchFacets)
		same = have == want
		return err
	}); err != nil || same {
		return err
	}
	return x.store.Update(ctx, func(tx WriteTx) error {
		have, err := tx.Counter(ctx, counterSearchFacets)
		if err != nil || have == want {
			return err
		}
		if v, err := tx.AddCounter(ctx, counterSearchFacets, want-have); err != nil || v != want {
			return cmp.Or(err, errIndexRaced) // another indexer wrote it meanwhile: roll back, compare again
		}
		cp, err := tx.Counter(ctx, counterSearchCheckpoint)
		if err != nil {
			return err
		}
		if _, err := tx.AddCounter(ctx, counterSearchCheckpoint, -cp); err != nil {
			return err
		}
		if cp > 0 {
			x.opts.Logger.Info("search: the facets changed; indexing every record again", "from_change", cp)
		}
		return nil
	})
}

// indexPlan is what one step read, ready to write.
type indexPlan struct {
	checkpoint, newCheckpoint int64
	put                       []SearchDoc
	drop                      []int64
}

func (x *SearchIndexer) step(ctx context.Context) (int, error) {
	pl, read, err := x.readStep(ctx)
	if err != nil || read == 0 {
		return 0, err
	}
	if err := x.writeStep(ctx, pl); err != nil {
		return 0, err
	}
	return read, nil
}

// readStep reads the next batch of changes and the documents they call
// for, in a read transaction.
func (x *SearchIndexer) readStep(ctx context.Context) (*indexPlan, int, error) {
	var pl indexPlan
	var read int
	err := x.store.View(ctx, func(tx ReadTx) error {
		var err error
		read, err = x.read(ctx, tx, &pl)
		return err
	})
	return &pl, read, err
}

// writeStep writes what readStep read, in a write transaction that fails
// with errIndexRaced when another step moved the checkpoint meanwhile.
func (x *SearchIndexer) writeStep(ctx context.Context, pl *indexPlan) error {
	return UpdateFollower(ctx, x.store, func(tx WriteTx) error {
		cp, err := tx.AddCounter(ctx, counterSearchCheckpoint, pl.newCheckpoint-pl.checkpoint)
		if err != nil {
			return err
		}
		if cp != pl.newCheckpoint {
			return errIndexRaced
		}
		if err := tx.DeleteSearchDocs(ctx, pl.drop); err != nil {
			return err
		}
		put, err := withoutPurged(ctx, tx, pl.put)
		if err != nil {
			return err
		}
		return tx.PutSearchDocs(ctx, put)
	})
}

// read gathers the next batch of changes, cut at a change boundary (the
// rows of one commit share a seq and the checkpoint must not fall inside
// one), and the documents they call for.
func (x *SearchIndexer) read(ctx context.Context, tx ReadTx, pl *indexPlan) (int, error) {
	cp, err := tx.Counter(ctx, counterSearchCheckpoint)
	if err != nil {
		return 0, err
	}
	pl.checkpoint = cp
	var rows []*ResourceRow
	for limit := x.opts.Batch; ; limit *= 2 { // a commit larger than the batch is read whole
		if rows, err = tx.Changes(ctx, cp, limit); err != nil {
			return 0, err
		}
		if len(rows) < limit {
			break
		}
		last := rows[len(rows)-1].Seq
		i := len(rows)
		for i > 0 && rows[i-1].Seq == last {
			i--
		}
		if i > 0 {
			rows = rows[:i]
			break
		}
	}
	if len(rows) == 0 {
		return 0, nil
	}
	pl.newCheckpoint = rows[len(rows)-1].Seq
	var live []*ResourceRow
	var keys []int64
	for _, r := range rows {
		switch {
		case r.Deleted != nil:
			pl.drop = append(pl.drop, r.Key)
		case r.Kind == KindWork || r.Kind == KindCollection:
			live = append(live, r)
			keys = append(keys, r.Key)
		}
	}
	if len(live) == 0 {
		return len(rows), nil
	}
	fields, err := tx.FieldsOf(ctx, keys)
	if err != nil {
		return 0, err
	}
	for _, r := range live {
		d := recordDoc(fields[r.Key])
		d.Facets = recordFacets(fields[r.Key], x.opts.Facets)
		d.Lang = recordLang(fields[r.Key])
		d.Key, d.Work, d.Kind = r.Key, r.Key, r.Kind
		pl.put = append(pl.put, d)
	}
	return len(rows), nil
}

// recordDoc returns the document of a resource's metadata: its title,
// the literals of dc:title and dcterms:title (each value once, joined by
// " / "); its creators and subjects likewise, from dc: and dcterms:
// creator and subject; the span of the years named by dc:date and
// dcterms: date, created and issued (recordYears); and its body, every
// literal but the titles joined by spaces. IRIs are left out.
func recordDoc(fields []Field) SearchDoc {
	var t, b, c, s strings.Builder
	seen := map[*strings.Builder]map[string]bool{}
	once := func(w *strings.Builder, v string) {
		if seen[w] == nil {
			seen[w] = map[string]bool{}
		}
		if seen[w][v] {
			return
		}
		seen[w][v] = true
		if w.Len() > 0 {
			w.WriteString(" / ")
		}
		w.WriteString(v)
	}
	var dates []string
	for _, f := range fields {
		name, ok := strings.CutPrefix(f.Predicate, NSDCTerms)
		if !ok {
			name, _ = strings.CutPrefix(f.Predicate, NSDC)
		}
		if name == f.Predicate {
			name = ""
		}
		for _, o := range f.Objects {
			if o.Kind != Literal || strings.TrimSpace(o.Value) == "" {
				continue
			}
			if name == "title" {
				once(&t, o.Value)
				continue
			}
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(o.Value)
			switch name {
			case "creator":
				once(&c, o.Value)
			case "subject":
				once(&s, o.Value)
			case "date", "created", "issued":
				dates = append(dates, o.Value)
			}
		}
	}
	d := SearchDoc{Title: t.String(), Body: b.String(), Creator: c.String(), Subject: s.String()}
	if lo, hi, ok := recordYears(dates); ok {
		d.DateLo, d.DateHi = lo, hi
	}
	return d
}

// withoutPurged drops the documents of resources purged since they were
// read (see Existing).
func withoutPurged(ctx context.Context, tx WriteTx, docs []SearchDoc) ([]SearchDoc, error) {
	keys := make([]int64, 0, 2*len(docs))
	for _, d := range docs {
		keys = append(keys, d.Key, d.Work)
	}
	live, err := Existing(ctx, tx, keys)
	if err != nil {
		return nil, err
	}
	out := docs[:0:0]
	for _, d := range docs {
		if live[d.Key] && live[d.Work] {
			out = append(out, d)
		}
	}
	return out, nil
}
