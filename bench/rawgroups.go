package bench

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/shelfmark/shelfmark"
)

// A raw limit of the same rows (RawGroupLimit).
//
// RawInsertLimit inserts a work's row and its statements, which is most of
// a plain work but not all of what an ingest writes: a patent with files
// has file sets and files below its work (rows with positions), the
// files' descriptions, its source key, the first job of each file and an
// audit entry for each resource it made. RawGroupLimit measures the plain
// insert of exactly those rows: the engine writes a batch of groups once
// through a RowRecorder, which keeps every row the transactions it commits
// insert, and the rows are then inserted again, each time with keys,
// sequence numbers and source keys of their own, in one durable
// transaction with one write a table. What the replay leaves out is what
// the engine adds to the rows: its checks and reads, building the rows,
// the group commit's hand-off, and the ingest pipeline around it.

// RowRecorder is a Storage that keeps the rows the transactions it
// commits through Update insert, to insert them again (Replay). It refuses
// (with an error from the write) the resource and membership writes that
// change or remove rows, which Replay could not make again and a batch of
// new groups makes none of. The writes of the other parts of WriteTx
// (OAI-PMH records, jobs beyond enqueueing, search, accounts, the web
// index) pass through unrecorded: a batch of new groups makes none of them
// either, which TestRawGroupLimitSameRows checks by counting every table.
type RowRecorder struct {
	shelfmark.Storage

	mu     sync.Mutex
	rows   rawRows
	rounds int // replays begun, for their source keys
}

// rawRows are the rows of the writes a RowRecorder kept, by table, in the
// order written.
type rawRows struct {
	resources   []shelfmark.ResourceRow
	fieldKeys   []int64
	fields      []shelfmark.Field
	memberships []shelfmark.Membership
	positions   []rawPositions
	fileKeys    []int64
	files       []shelfmark.File
	sourceKeys  []string
	sources     []int64
	audit       []shelfmark.AuditEntry
	jobs        []shelfmark.NewJob
	jobsAt      time.Time
	counters    map[string]int64
}

// rawPositions is one SetPositions.
type rawPositions struct {
	parent   int64
	children []int64
}

// add appends o's rows to r's.
func (r *rawRows) add(o *rawRows) {
	r.resources = append(r.resources, o.resources...)
	r.fieldKeys, r.fields = append(r.fieldKeys, o.fieldKeys...), append(r.fields, o.fields...)
	r.memberships = append(r.memberships, o.memberships...)
	r.positions = append(r.positions, o.positions...)
	r.fileKeys, r.files = append(r.fileKeys, o.fileKeys...), append(r.files, o.files...)
	r.sourceKeys, r.sources = append(r.sourceKeys, o.sourceKeys...), append(r.sources, o.sources...)
	r.audit = append(r.audit, o.audit...)
	r.jobs = append(r.jobs, o.jobs...)
	if r.jobsAt.IsZero() {
		r.jobsAt = o.jobsAt
	}
	for n, d := range o.counters {
		if r.counters == nil {
			r.counters = map[string]int64{}
		}
		r.counters[n] += d
	}
}

// NewRowRecorder returns a RowRecorder over store.
func NewRowRecorder(store shelfmark.Storage) *RowRecorder {
	return &RowRecorder{Storage: store}
}

// Update implements shelfmark.Storage: fn runs on a transaction that
// records the rows it inserts, kept once the transaction has committed.
func (r *RowRecorder) Update(ctx context.Context, fn func(shelfmark.WriteTx) error) error {
	var rec *recordingTx
	err := r.Storage.Update(ctx, func(tx shelfmark.WriteTx) error {
		rec = &recordingTx{WriteTx: tx}
		return fn(rec)
	})
	if err != nil || rec == nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows.add(&rec.rows)
	return nil
}

// Resources returns how many resources the recorded rows hold.
func (r *RowRecorder) Resources() int { r.mu.Lock(); defer r.mu.Unlock(); return len(r.rows.resources) }

// Groups returns how many source keys the recorded rows hold: one a group
// an ingest made.
func (r *RowRecorder) Groups() int { r.mu.Lock(); defer r.mu.Unlock(); return len(r.rows.sourceKeys) }

// Replay inserts the recorded rows again in one transaction of store, one
// write a table (the recording may have taken several transactions), with
// fresh keys (one reserved block), fresh sequence numbers and source keys
// made unique by the number of the replay. A key the recording did not
// insert (a collection the groups joined) is kept as it is.
func (r *RowRecorder) Replay(ctx context.Context, store shelfmark.Storage) error {
	r.mu.Lock()
	rows := r.rows
	r.rounds++
	round := r.rounds
	r.mu.Unlock()
	if len(rows.resources) == 0 {
		return fmt.Errorf("raw groups: nothing recorded")
	}
	first, err := store.AllocateKeys(ctx, len(rows.resources))
	if err != nil {
		return fmt.Errorf("raw groups: reserve %d keys: %w", len(rows.resources), err)
	}
	return store.Update(ctx, func(tx shelfmark.WriteTx) error {
		if err := replayRows(ctx, tx, &rows, first, round); err != nil {
			return fmt.Errorf("raw groups: replay: %w", err)
		}
		return nil
	})
}

// replayRows writes rows in tx, the resources' keys from first on and
// source keys marked with round.
func replayRows(ctx context.Context, tx shelfmark.WriteTx, rows *rawRows, first int64, round int) error {
	m := &rawRemap{keys: make(map[int64]int64, len(rows.resources)), seqs: map[int64]int64{}}
	for i, r := range rows.resources {
		m.keys[r.Key] = first + int64(i)
		m.seqs[r.Seq] = 0
	}
	seqs := slices.Sorted(maps.Keys(m.seqs))
	base, err := tx.NextSeq(ctx, len(seqs))
	if err != nil {
		return err
	}
	for i, s := range seqs {
		m.seqs[s] = base + int64(i)
	}
	res := make([]*shelfmark.ResourceRow, len(rows.resources))
	for i := range rows.resources {
		r := rows.resources[i]
		r.Key, r.Parent, r.Source, r.Position, r.Seq = m.key(r.Key), m.key(r.Parent), m.key(r.Source), m.position(r.Position), m.seqs[r.Seq]
		res[i] = &r
	}
	if err := tx.InsertResources(ctx, res); err != nil {
		return err
	}
	if len(rows.fields) > 0 {
		if err := tx.PutFields(ctx, m.keyList(rows.fieldKeys), rows.fields); err != nil {
			return err
		}
	}
	if len(rows.memberships) > 0 {
		ms := slices.Clone(rows.memberships)
		for i := range ms {
			ms[i].Collection, ms[i].Member = m.key(ms[i].Collection), m.key(ms[i].Member)
		}
		if err := tx.InsertMemberships(ctx, ms); err != nil {
			return err
		}
	}
	for _, p := range rows.positions {
		if err := tx.SetPositions(ctx, m.key(p.parent), m.keyList(p.children)); err != nil {
			return err
		}
	}
	if len(rows.files) > 0 {
		fs := make([]*shelfmark.File, len(rows.files))
		for i := range rows.files {
			fs[i] = &rows.files[i]
		}
		if err := tx.InsertFiles(ctx, m.keyList(rows.fileKeys), fs); err != nil {
			return err
		}
	}
	if len(rows.sourceKeys) > 0 {
		sk := make([]string, len(rows.sourceKeys))
		for i, s := range rows.sourceKeys {
			sk[i] = fmt.Sprintf("%s#raw%d", s, round)
		}
		if err := tx.InsertSources(ctx, sk, m.keyList(rows.sources)); err != nil {
			return err
		}
	}
	if len(rows.audit) > 0 {
		es := make([]*shelfmark.AuditEntry, len(rows.audit))
		for i := range rows.audit {
			e := rows.audit[i]
			e.Key, e.Resource = 0, m.key(e.Resource)
			es[i] = &e
		}
		if err := tx.InsertAudit(ctx, es); err != nil {
			return err
		}
	}
	if len(rows.jobs) > 0 {
		js := slices.Clone(rows.jobs)
		for i := range js {
			js[i].Resource = m.key(js[i].Resource)
		}
		if err := tx.EnqueueJobs(ctx, js, rows.jobsAt); err != nil {
			return err
		}
	}
	for _, n := range slices.Sorted(maps.Keys(rows.counters)) {
		if _, err := tx.AddCounter(ctx, n, rows.counters[n]); err != nil {
			return err
		}
	}
	return nil
}

// RawGroupLimit replays rec's rows (Replay) on store, one durable
// transaction at a time, for d (at least once), and returns the groups
// written a second: the raw limit of the rows an ingest of those groups
// stores.
func RawGroupLimit(ctx context.Context, store shelfmark.Storage, rec *RowRecorder, d time.Duration) (float64, error) {
	groups := rec.Groups()
	if groups == 0 {
		return 0, fmt.Errorf("raw groups: no group recorded")
	}
	start := time.Now()
	n := 0
	for n == 0 || time.Since(start) < d {
		if err := rec.Replay(ctx, store); err != nil {
			return 0, err
		}
		n++
	}
	return float64(n*groups) / time.Since(start).Seconds(), nil
}

// rawRemap gives a replay's keys and sequence numbers.
type rawRemap struct {
	keys, seqs map[int64]int64
}

// key returns the replay's key for k (k itself for one not recorded, and
// for 0).
func (m *rawRemap) key(k int64) int64 {
	if n, ok := m.keys[k]; ok {
		return n
	}
	return k
}

// keyList returns ks with key applied.
func (m *rawRemap) keyList(ks []int64) []int64 {
	out := make([]int64, len(ks))
	for i, k := range ks {
		out[i] = m.key(k)
	}
	return out
}

// position returns the replay's position for p: an unordered child's
// holds its key.
func (m *rawRemap) position(p int64) int64 {
	if p >= shelfmark.UnorderedBase {
		return shelfmark.UnorderedBase + m.key(p-shelfmark.UnorderedBase)
	}
	return p
}

// recordingTx is the WriteTx of a RowRecorder's transaction: the rows it
// inserts are copied into rows, then written.
type recordingTx struct {
	shelfmark.WriteTx
	rows rawRows
}

// refuse is the error of a write Replay cannot make again.
func refuse(what string) error {
	return fmt.Errorf("raw groups: %s cannot be replayed (only writes of new rows can)", what)
}

func (t *recordingTx) InsertResources(ctx context.Context, rows []*shelfmark.ResourceRow) error {
	for _, r := range rows {
		t.rows.resources = append(t.rows.resources, *r)
	}
	return t.WriteTx.InsertResources(ctx, rows)
}

func (t *recordingTx) PutFields(ctx context.Context, keys []int64, fields []shelfmark.Field) error {
	t.rows.fieldKeys, t.rows.fields = append(t.rows.fieldKeys, keys...), append(t.rows.fields, fields...)
	return t.WriteTx.PutFields(ctx, keys, fields)
}

func (t *recordingTx) InsertMemberships(ctx context.Context, ms []shelfmark.Membership) error {
	t.rows.memberships = append(t.rows.memberships, ms...)
	return t.WriteTx.InsertMemberships(ctx, ms)
}

func (t *recordingTx) SetPositions(ctx context.Context, parent int64, children []int64) error {
	t.rows.positions = append(t.rows.positions, rawPositions{parent: parent, children: slices.Clone(children)})
	return t.WriteTx.SetPositions(ctx, parent, children)
}

func (t *recordingTx) InsertFiles(ctx context.Context, keys []int64, files []*shelfmark.File) error {
	for _, f := range files {
		c := *f
		if f.Format != nil {
			fm := *f.Format
			c.Format = &fm
		}
		t.rows.files = append(t.rows.files, c)
	}
	t.rows.fileKeys = append(t.rows.fileKeys, keys...)
	return t.WriteTx.InsertFiles(ctx, keys, files)
}

func (t *recordingTx) InsertSources(ctx context.Context, sourceKeys []string, keys []int64) error {
	t.rows.sourceKeys, t.rows.sources = append(t.rows.sourceKeys, sourceKeys...), append(t.rows.sources, keys...)
	return t.WriteTx.InsertSources(ctx, sourceKeys, keys)
}

func (t *recordingTx) InsertAudit(ctx context.Context, entries []*shelfmark.AuditEntry) error {
	for _, e := range entries {
		t.rows.audit = append(t.rows.audit, *e)
	}
	return t.WriteTx.InsertAudit(ctx, entries)
}

func (t *recordingTx) EnqueueJobs(ctx context.Context, jobs []shelfmark.NewJob, now time.Time) error {
	t.rows.jobs = append(t.rows.jobs, jobs...)
	if t.rows.jobsAt.IsZero() {
		t.rows.jobsAt = now
	}
	return t.WriteTx.EnqueueJobs(ctx, jobs, now)
}

func (t *recordingTx) AddCounter(ctx context.Context, name string, delta int64) (int64, error) {
	if t.rows.counters == nil {
		t.rows.counters = map[string]int64{}
	}
	t.rows.counters[name] += delta
	return t.WriteTx.AddCounter(ctx, name, delta)
}

// The writes that change or remove rows: a batch of new groups makes
// none, and Replay could not make them again.

func (t *recordingTx) UpdateResource(context.Context, *shelfmark.ResourceRow) error {
	return refuse("UpdateResource")
}
func (t *recordingTx) SetEffectiveAccess(context.Context, []*shelfmark.ResourceRow) error {
	return refuse("SetEffectiveAccess")
}
func (t *recordingTx) SetVersions(context.Context, []*shelfmark.ResourceRow) error {
	return refuse("SetVersions")
}
func (t *recordingTx) SetOwnAccess(context.Context, []*shelfmark.ResourceRow) error {
	return refuse("SetOwnAccess")
}
func (t *recordingTx) DeleteMemberships(context.Context, []shelfmark.Membership) error {
	return refuse("DeleteMemberships")
}
func (t *recordingTx) Tombstone(context.Context, int64, int64, time.Time) (int64, error) {
	return 0, refuse("Tombstone")
}
func (t *recordingTx) PurgeTree(context.Context, int64, int) (*shelfmark.Purged, error) {
	return nil, refuse("PurgeTree")
}

// WritePatentsSVG draws a patents run's works/s by time bucket against the
// raw limit of the same rows measured on a fresh store before it (fresh)
// and in the run's own store after it (end; 0: not measured), as a
// standalone SVG at path.
func WritePatentsSVG(path string, r *Report, fresh, end float64) error {
	if len(r.Steps) == 0 {
		return fmt.Errorf("no buckets to draw")
	}
	c := chart{title: fmt.Sprintf("Patents ingested on %s: works stored per second, %s works", r.Backend, fmtNum(float64(r.Items))),
		xlabel: "seconds into the ingest", ylabel: "works/s"}
	l := line{name: "works/s"}
	t := 0.0
	for _, s := range r.Steps {
		t += s.Seconds
		l.xs, l.ys = append(l.xs, t), append(l.ys, s.RatePerS)
	}
	c.lines = append(c.lines, l)
	if fresh > 0 {
		c.lines = append(c.lines, line{name: "raw limit of the same rows, fresh store", xs: []float64{0, t}, ys: []float64{fresh, fresh}, dashed: true})
	}
	if end > 0 {
		c.lines = append(c.lines, line{name: "raw limit of the same rows, at the run's end", xs: []float64{0, t}, ys: []float64{end, end}, dashed: true})
	}
	if err := os.WriteFile(path, standalone(c.svg()), 0o644); err != nil {
		return fmt.Errorf("write chart: %w", err)
	}
	return nil
}
