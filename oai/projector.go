package oai

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
)

// Counters the projector keeps in the database, in the same transaction as
// the rows it writes, so a crash never loses or repeats a change.
const (
	counterCheckpoint = "oai_checkpoint" // change seq projected up to
	counterSeq        = "oai_seq"        // the view's own row numbers
	counterDatestamp  = "oai_datestamp"  // last datestamp written (unix seconds)
	counterEmbargo    = "oai_embargo"    // embargo ends projected up to (unix µs)
)

// ProjectorOptions configure a Projector.
type ProjectorOptions struct {
	// Batch is how many changes one step reads (default 1,000).
	Batch int
	// Poll is how often Run looks for changes when nobody calls Notify
	// (default 1 s; changes made through another process or server are
	// found this way).
	Poll time.Duration
	// Coalesce is how long Run waits after a notification before it
	// reads the changes, so that those of the next commits join the step
	// (0: shelfmark.DefaultCoalesce; less than 0: none).
	Coalesce time.Duration
	// Logger receives records that fail to render (they are skipped, not
	// retried forever).
	Logger *slog.Logger
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
	// IDs is the repository's id codec (default shelfmark.LegacyIDCodec,
	// for tests): set specs and log lines name resources by id.
	IDs *shelfmark.IDCodec
}

// Projector keeps the OAI-PMH view up to date: it follows the repository's
// change sequence, renders each changed public work in every registered
// format, and writes the rows whose bytes changed, tombstones for works
// deleted or withdrawn from public view, and the set of every public
// collection. It is the only writer of the view; several projectors (one
// per server) may run against one database: a step that finds another
// projector was faster rolls back.
type Projector struct {
	store   shelfmark.Storage
	blobs   shelfmark.BlobStore
	formats *Registry
	opts    ProjectorOptions
	wake    chan struct{}
}

// NewProjector returns a projector of store into the view.
func NewProjector(store shelfmark.Storage, blobs shelfmark.BlobStore, formats *Registry, opts ProjectorOptions) *Projector {
	if opts.Batch <= 0 {
		opts.Batch = 1000
	}
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	if opts.Coalesce == 0 {
		opts.Coalesce = shelfmark.DefaultCoalesce
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.IDs == nil {
		opts.IDs = shelfmark.LegacyIDCodec()
	}
	return &Projector{store: store, blobs: blobs, formats: formats, opts: opts, wake: make(chan struct{}, 1)}
}

// Notify tells the projector that changes were committed; it never blocks.
func (p *Projector) Notify() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Run projects changes as they come until ctx ends.
func (p *Projector) Run(ctx context.Context) error {
	t := time.NewTicker(p.opts.Poll)
	defer t.Stop()
	for {
		start := time.Now()
		n, err := p.catchUp(ctx, true)
		if err != nil && ctx.Err() == nil {
			p.opts.Logger.Error("oai: projecting changes", "err", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			p.opts.Logger.Info("oai: records brought up to date", "changes", n, "seconds", d.Seconds())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.wake:
			if err := shelfmark.Coalesce(ctx, p.opts.Coalesce); err != nil {
				return err
			}
		case <-t.C:
		}
	}
}

// CatchUp projects every change committed before it was called and returns
// how many changes it read.
func (p *Projector) CatchUp(ctx context.Context) (int, error) { return p.catchUp(ctx, false) }

// catchUp steps as shelfmark.CatchUpSteps does; trickle is set by Run's
// loop.
func (p *Projector) catchUp(ctx context.Context, trickle bool) (int, error) {
	return shelfmark.CatchUpSteps(ctx, p.opts.Batch, trickle, p.Step, func(total int) {
		p.opts.Logger.Info("oai: catching up with changes", "changes", total)
	})
}

// errRaced means another projector advanced the checkpoint first.
var errRaced = errors.New("oai: another projector advanced the view")

// Step projects the next batch of changes (and embargoes that ended) and
// returns how many it read; 0 means the view is up to date.
func (p *Projector) Step(ctx context.Context) (int, error) {
	for attempt := 0; ; attempt++ {
		n, err := p.step(ctx)
		if errors.Is(err, errRaced) && attempt < 3 {
			continue
		}
		return n, err
	}
}

// plan is what one step read and rendered, ready to write.
type plan struct {
	checkpoint, newCheckpoint int64
	embargoFrom, embargoTo    int64
	recs                      []*shelfmark.OAIRecord
	sets                      []shelfmark.OAISet
	dropSets                  []int64
}

func (p *Projector) step(ctx context.Context) (int, error) {
	var pl plan
	var read int
	err := p.store.View(ctx, func(tx shelfmark.ReadTx) error {
		var err error
		read, err = p.read(ctx, tx, &pl)
		return err
	})
	if err != nil {
		return 0, err
	}
	if read == 0 && pl.embargoTo == pl.embargoFrom {
		return 0, nil
	}
	err = shelfmark.UpdateFollower(ctx, p.store, func(tx shelfmark.WriteTx) error { return p.write(ctx, tx, &pl) })
	if err != nil {
		return 0, err
	}
	return read, nil
}

// read gathers the next batch of changes and renders it.
func (p *Projector) read(ctx context.Context, tx shelfmark.ReadTx, pl *plan) (int, error) {
	cp, err := tx.Counter(ctx, counterCheckpoint)
	if err != nil {
		return 0, err
	}
	pl.checkpoint, pl.newCheckpoint = cp, cp
	rows, err := p.changes(ctx, tx, cp)
	if err != nil {
		return 0, err
	}
	if len(rows) > 0 {
		pl.newCheckpoint = rows[len(rows)-1].Seq
	}
	// embargoes that ended since the last look
	now := p.opts.Now()
	emb, err := tx.Counter(ctx, counterEmbargo)
	if err != nil {
		return 0, err
	}
	pl.embargoFrom, pl.embargoTo = emb, emb
	if nowUS := now.UnixMicro(); nowUS > emb && len(rows) < p.opts.Batch {
		ended, err := tx.AccessEnds(ctx, time.UnixMicro(emb), now)
		if err != nil {
			return 0, err
		}
		if len(ended) > 0 {
			more, err := tx.Resources(ctx, ended)
			if err != nil {
				return 0, err
			}
			rows = append(rows, more...)
		}
		pl.embargoTo = nowUS
	}
	if len(rows) == 0 {
		return 0, nil
	}
	works, colls, err := p.affected(ctx, tx, rows)
	if err != nil {
		return 0, err
	}
	if err := p.renderWorks(ctx, tx, works, now, pl); err != nil {
		return 0, err
	}
	if err := p.projectSets(ctx, tx, colls, now, pl); err != nil {
		return 0, err
	}
	return len(rows), nil
}

// changes reads the next batch of changes after seq cp, cut at a change
// boundary: the rows of one commit share a seq, and the checkpoint must not
// fall inside one.
func (p *Projector) changes(ctx context.Context, tx shelfmark.ReadTx, cp int64) ([]*shelfmark.ResourceRow, error) {
	limit := p.opts.Batch
	for {
		rows, err := tx.Changes(ctx, cp, limit)
		if err != nil {
			return nil, err
		}
		if len(rows) < limit {
			return rows, nil
		}
		last := rows[len(rows)-1].Seq
		i := len(rows)
		for i > 0 && rows[i-1].Seq == last {
			i--
		}
		if i > 0 {
			return rows[:i], nil
		}
		limit *= 2 // one commit larger than the batch: read all of it
	}
}

// affected sorts changed rows into the works and collections whose view
// may have changed: works themselves, the works holding changed files, and
// collections.
func (p *Projector) affected(ctx context.Context, tx shelfmark.ReadTx, rows []*shelfmark.ResourceRow) (works, colls []*shelfmark.ResourceRow, err error) {
	seenW := map[int64]bool{}
	seenC := map[int64]bool{}
	var filesets []int64
	for _, r := range rows {
		switch r.Kind {
		case shelfmark.KindWork:
			if !seenW[r.Key] {
				seenW[r.Key] = true
				works = append(works, r)
			}
		case shelfmark.KindCollection:
			if !seenC[r.Key] {
				seenC[r.Key] = true
				colls = append(colls, r)
			}
		case shelfmark.KindFile:
			if r.Parent != 0 {
				filesets = append(filesets, r.Parent)
			}
		}
	}
	if len(filesets) == 0 {
		return works, colls, nil
	}
	// a file added or changed later (a new source record) can change a
	// work's records; files made with their work come in the same batch
	fs, err := tx.Resources(ctx, uniq(filesets))
	if err != nil {
		return nil, nil, err
	}
	var holders []int64
	for _, f := range fs {
		if f.Parent != 0 && !seenW[f.Parent] {
			seenW[f.Parent] = true
			holders = append(holders, f.Parent)
		}
	}
	if len(holders) == 0 {
		return works, colls, nil
	}
	hs, err := tx.Resources(ctx, holders)
	if err != nil {
		return nil, nil, err
	}
	for _, h := range hs {
		if h.Kind == shelfmark.KindWork {
			works = append(works, h)
		}
	}
	return works, colls, nil
}

func uniq(keys []int64) []int64 {
	slices.Sort(keys)
	return slices.Compact(keys)
}

// public reports whether a resource is in public view at now: not deleted,
// and its effective access (its own, that of the works holding it) public,
// its embargo (if any) ended and its lease (if any) not yet ended.
func public(r *shelfmark.ResourceRow, now time.Time) bool {
	return r.Deleted == nil && r.EffectiveAt(now) == shelfmark.Public
}

// renderWorks renders the records of works and adds to pl the rows whose
// bytes, sets or status changed.
func (p *Projector) renderWorks(ctx context.Context, tx shelfmark.ReadTx, works []*shelfmark.ResourceRow, now time.Time, pl *plan) error {
	if len(works) == 0 {
		return nil
	}
	var live []int64
	for _, w := range works {
		if public(w, now) {
			live = append(live, w.Key)
		}
	}
	var fields map[int64][]shelfmark.Field
	var member map[int64][]int64
	var sources map[int64][]*shelfmark.File
	if len(live) > 0 {
		var err error
		if fields, err = tx.FieldsOf(ctx, live); err != nil {
			return err
		}
		if member, err = tx.MemberOfMany(ctx, live); err != nil {
			return err
		}
		if sources, err = tx.FilesOfWorks(ctx, live, shelfmark.UseSource, now); err != nil {
			return err
		}
	}
	// the rows the works have, read at once: a work seen among the
	// changes may have rows whatever its version (a change of access
	// above it reaches it without a new version)
	keys := make([]int64, len(works))
	for i, w := range works {
		keys[i] = w.Key
	}
	rows, err := tx.OAIRecordsOf(ctx, keys)
	if err != nil {
		return err
	}
	olds := map[int64][]*shelfmark.OAIRecord{}
	for _, o := range rows {
		olds[o.Key] = append(olds[o.Key], o)
	}
	for _, w := range works {
		old := olds[w.Key]
		if !public(w, now) {
			for _, o := range old {
				if !o.Deleted {
					pl.recs = append(pl.recs, &shelfmark.OAIRecord{Prefix: o.Prefix, Key: w.Key, Deleted: true, Sets: o.Sets})
				}
			}
			continue
		}
		work := &Work{ID: p.opts.IDs.Encode(w.Key), Row: w, Fields: fields[w.Key], Sources: sources[w.Key], Blobs: p.blobs}
		sets := member[w.Key]
		for _, f := range p.formats.Formats() {
			payload, ok, err := f.Render(ctx, work)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				p.opts.Logger.Warn("oai: record not rendered", "id", work.ID, "format", f.Prefix(), "err", err)
				ok = false
			}
			var prev *shelfmark.OAIRecord
			for _, o := range old {
				if o.Prefix == f.Prefix() {
					prev = o
				}
			}
			switch {
			case !ok && (prev == nil || prev.Deleted):
				// nothing to say in this format
			case !ok:
				pl.recs = append(pl.recs, &shelfmark.OAIRecord{Prefix: f.Prefix(), Key: w.Key, Deleted: true, Sets: prev.Sets})
			default:
				if prev != nil && !prev.Deleted && slices.Equal(prev.Sets, sets) {
					same, err := samePayload(ctx, tx, f.Prefix(), w.Key, payload)
					if err != nil {
						return err
					}
					if same {
						continue // same bytes: the record did not change
					}
				}
				pl.recs = append(pl.recs, &shelfmark.OAIRecord{Prefix: f.Prefix(), Key: w.Key, Sets: sets, Payload: payload})
			}
		}
	}
	return nil
}

// samePayload reports whether the stored record of (prefix, key) holds
// payload.
func samePayload(ctx context.Context, tx shelfmark.ReadTx, prefix string, key int64, payload []byte) (bool, error) {
	cur, err := tx.OAIRecord(ctx, prefix, key)
	if err != nil || cur == nil {
		return false, err
	}
	return bytes.Equal(cur.Payload, payload), nil
}

// projectSets brings the sets of changed collections, and of the
// collections below them, up to date.
func (p *Projector) projectSets(ctx context.Context, tx shelfmark.ReadTx, colls []*shelfmark.ResourceRow, now time.Time, pl *plan) error {
	if len(colls) == 0 {
		return nil
	}
	keys := make([]int64, len(colls))
	for i, c := range colls {
		keys[i] = c.Key
	}
	olds, err := tx.OAISetsByKey(ctx, keys)
	if err != nil {
		return err
	}
	// collections whose spec may change with theirs
	todo := map[int64]bool{}
	for _, c := range colls {
		todo[c.Key] = true
	}
	for _, o := range olds {
		below, err := tx.OAISetTree(ctx, o.Spec)
		if err != nil {
			return err
		}
		for _, k := range below {
			todo[k] = true
		}
	}
	sp := &specs{tx: tx, ids: p.opts.IDs, now: now, log: p.opts.Logger, memo: map[int64]*shelfmark.OAISet{},
		deep: map[int64]bool{}, walking: map[int64]bool{}}
	order := make([]int64, 0, len(todo))
	for k := range todo {
		order = append(order, k)
	}
	sort.Slice(order, func(i, j int) bool { return order[i] < order[j] })
	for _, k := range order {
		s, err := sp.set(ctx, k)
		if err != nil {
			return err
		}
		if s == nil {
			pl.dropSets = append(pl.dropSets, k)
		} else {
			pl.sets = append(pl.sets, *s)
		}
	}
	return nil
}

// specs computes the sets of collections from the database, following
// each collection's parents up to a root.
type specs struct {
	tx   shelfmark.ReadTx
	ids  *shelfmark.IDCodec
	now  time.Time
	log  *slog.Logger
	memo map[int64]*shelfmark.OAISet
	// deep holds the collections left out of the sets because they nest
	// deeper than maxSetDepth (memo holds nil for them); walking, those
	// whose set is being found (a collection met again is in a loop).
	deep, walking map[int64]bool
}

// maxSetDepth bounds set nesting: the engine refuses to nest collections
// deeper, and refuses loops; collections nested deeper by other means (a
// chain of collections added into a new top one, or a database written
// before the limit) are left out of the sets, and reported, instead of
// stopping the whole view.
const maxSetDepth = shelfmark.MaxCollectionNesting

// tooDeep leaves key out of the sets and reports it.
func (s *specs) tooDeep(key int64) {
	s.memo[key], s.deep[key] = nil, true
	s.log.Warn("oai: collection nested deeper than sets may be; it is left out of the sets (its works are still harvested)",
		"id", s.ids.Encode(key), "max", maxSetDepth)
}

// set returns the set of collection key, or nil when it is not a public,
// live collection or would nest deeper than maxSetDepth. A collection under
// several parents takes its place under the one with the lowest key that
// is a set with room below it; a collection with no parent that is a set
// is a set at the top, unless a parent was left out for nesting too deep
// (or is in a loop), when it is left out too. Each collection is looked at
// once per step (memo).
func (s *specs) set(ctx context.Context, key int64) (*shelfmark.OAISet, error) {
	if v, ok := s.memo[key]; ok {
		return v, nil
	}
	row, err := s.tx.Resource(ctx, key)
	if err != nil {
		return nil, err
	}
	if row == nil || row.Kind != shelfmark.KindCollection || !public(row, s.now) {
		s.memo[key] = nil
		return nil, nil
	}
	parents, err := s.tx.MemberOf(ctx, key)
	if err != nil {
		return nil, err
	}
	slices.Sort(parents)
	s.walking[key] = true
	defer delete(s.walking, key)
	var under *shelfmark.OAISet
	blocked := false // a parent is too deep, in a loop, or a set without room below
	for _, pk := range parents {
		if s.walking[pk] {
			blocked = true
			continue
		}
		ps, err := s.set(ctx, pk)
		switch {
		case err != nil:
			return nil, err
		case ps == nil:
			blocked = blocked || s.deep[pk]
		case strings.Count(ps.Spec, ":") >= maxSetDepth:
			blocked = true
		default:
			under = ps
		}
		if under != nil {
			break
		}
	}
	if under == nil && blocked {
		s.tooDeep(key)
		return nil, nil
	}
	spec := string(s.ids.Encode(key))
	if under != nil {
		spec = under.Spec + ":" + spec
	}
	name, err := setName(ctx, s.tx, s.ids, key)
	if err != nil {
		return nil, err
	}
	v := &shelfmark.OAISet{Key: key, Spec: spec, Name: name}
	s.memo[key] = v
	return v, nil
}

// setName is a collection's title, or its id when it has none.
func setName(ctx context.Context, tx shelfmark.ReadTx, ids *shelfmark.IDCodec, key int64) (string, error) {
	fs, err := tx.Fields(ctx, key, shelfmark.NSDCTerms+"title", shelfmark.NSDC+"title")
	if err != nil {
		return "", err
	}
	for _, f := range fs {
		for _, o := range f.Objects {
			if o.Value != "" {
				return o.Value, nil
			}
		}
	}
	return "Collection " + string(ids.Encode(key)), nil
}

// write stores a plan: rows numbered from the view's counter and stamped
// with a datestamp that never falls, the sets, and the new checkpoint.
func (p *Projector) write(ctx context.Context, tx shelfmark.WriteTx, pl *plan) error {
	cp, err := tx.AddCounter(ctx, counterCheckpoint, pl.newCheckpoint-pl.checkpoint)
	if err != nil {
		return err
	}
	if cp != pl.newCheckpoint {
		return errRaced
	}
	if pl.embargoTo != pl.embargoFrom {
		v, err := tx.AddCounter(ctx, counterEmbargo, pl.embargoTo-pl.embargoFrom)
		if err != nil {
			return err
		}
		if v != pl.embargoTo {
			return errRaced
		}
	}
	if len(pl.dropSets) > 0 {
		if err := tx.DeleteOAISets(ctx, pl.dropSets); err != nil {
			return err
		}
	}
	if err := dropPurged(ctx, tx, pl); err != nil {
		return err
	}
	if len(pl.sets) > 0 {
		if err := tx.PutOAISets(ctx, pl.sets); err != nil {
			return err
		}
	}
	if len(pl.recs) == 0 {
		return nil
	}
	last, err := tx.AddCounter(ctx, counterSeq, int64(len(pl.recs)))
	if err != nil {
		return err
	}
	stamp, err := tx.Counter(ctx, counterDatestamp)
	if err != nil {
		return err
	}
	if now := p.opts.Now().Unix(); now > stamp {
		if stamp, err = tx.AddCounter(ctx, counterDatestamp, now-stamp); err != nil {
			return err
		}
	}
	first := last - int64(len(pl.recs)) + 1
	ds := time.Unix(stamp, 0).UTC()
	for i, r := range pl.recs {
		r.Seq, r.Datestamp = first+int64(i), ds
	}
	return tx.PutOAIRecords(ctx, pl.recs)
}

// dropPurged leaves out of pl the records and sets of resources purged
// since they were read (shelfmark.Existing): the purge wrote their deleted
// records itself.
func dropPurged(ctx context.Context, tx shelfmark.WriteTx, pl *plan) error {
	keys := make([]int64, 0, len(pl.recs)+len(pl.sets))
	for _, r := range pl.recs {
		keys = append(keys, r.Key)
	}
	for _, s := range pl.sets {
		keys = append(keys, s.Key)
	}
	live, err := shelfmark.Existing(ctx, tx, keys)
	if err != nil {
		return err
	}
	recs := pl.recs[:0:0]
	for _, r := range pl.recs {
		if live[r.Key] {
			recs = append(recs, r)
		}
	}
	sets := pl.sets[:0:0]
	for _, s := range pl.sets {
		if live[s.Key] {
			sets = append(sets, s)
		}
	}
	pl.recs, pl.sets = recs, sets
	return nil
}
