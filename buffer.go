package shelfmark

import (
	"context"
	"maps"
	"slices"
	"time"
)

// bufferedTx gathers the new rows of a whole group commit (resources,
// statements, memberships, files) and writes them with one bulk statement
// per table when the batch ends, instead of a few statements per operation.
// On PostgreSQL that turns hundreds of round trips into a handful.
//
// Correctness: only inserts of brand-new rows (and depositors, memberships,
// characterization results and finished jobs) are held back. A read the
// buffer can answer merges what it holds with what the store returns
// (Resource, Resources, MemberOfMany, Owners, Sources, JobHeld); every other
// method of WriteTx flushes first (buffer_flush.go), so every operation
// still sees the writes of the operations before it. The transaction is a
// named field, not embedded, so that a method added to WriteTx does not
// compile until the buffer decides how to serve it, and
// TestBufferServesOrFlushes checks each decision over a real store.
type bufferedTx struct {
	tx          WriteTx
	resources   []*ResourceRow
	byKey       map[int64]*ResourceRow
	fieldKeys   []int64
	fields      []Field
	memberships []Membership
	fileKeys    []int64
	files       []*File
	sourceKeys  []string
	sourceRes   []int64
	sources     map[string]int64
	jobs        []NewJob
	jobsAt      time.Time
	formatKeys  []int64
	formats     []*Format
	doneJobs    []int64
	// owners maps a resource to its depositor (the last SetOwners wins).
	owners map[int64]int64
	// failed is set when a flush failed: the error belongs to no single
	// operation of the batch (see committer.commit).
	failed bool
}

var _ WriteTx = (*bufferedTx)(nil)

func newBufferedTx(tx WriteTx) *bufferedTx {
	return &bufferedTx{tx: tx, byKey: map[int64]*ResourceRow{}, sources: map[string]int64{}, owners: map[int64]int64{}}
}

func (b *bufferedTx) pending() bool {
	return len(b.resources)+len(b.fields)+len(b.memberships)+len(b.files)+len(b.sourceKeys)+len(b.jobs)+
		len(b.formatKeys)+len(b.doneJobs)+len(b.owners) > 0
}

// flush writes what is held back, in dependency order.
func (b *bufferedTx) flush(ctx context.Context) error {
	if !b.pending() {
		return nil
	}
	if err := b.write(ctx); err != nil {
		b.failed = true
		return err
	}
	return nil
}

// write writes what is held back and empties the buffer.
func (b *bufferedTx) write(ctx context.Context) error {
	if len(b.resources) > 0 {
		if err := b.tx.InsertResources(ctx, b.resources); err != nil {
			return err
		}
	}
	if err := b.flushOwners(ctx); err != nil {
		return err
	}
	if len(b.fields) > 0 {
		if err := b.tx.PutFields(ctx, b.fieldKeys, b.fields); err != nil {
			return err
		}
	}
	if len(b.memberships) > 0 {
		if err := b.tx.InsertMemberships(ctx, b.memberships); err != nil {
			return err
		}
	}
	if len(b.files) > 0 {
		if err := b.tx.InsertFiles(ctx, b.fileKeys, b.files); err != nil {
			return err
		}
	}
	if len(b.sourceKeys) > 0 {
		if err := b.tx.InsertSources(ctx, b.sourceKeys, b.sourceRes); err != nil {
			return err
		}
	}
	if len(b.jobs) > 0 {
		if err := b.tx.EnqueueJobs(ctx, b.jobs, b.jobsAt); err != nil {
			return err
		}
	}
	if len(b.formatKeys) > 0 {
		if err := b.tx.SetFileFormats(ctx, b.formatKeys, b.formats); err != nil {
			return err
		}
	}
	if len(b.doneJobs) > 0 {
		if err := b.tx.DeleteJobs(ctx, b.doneJobs); err != nil {
			return err
		}
	}
	b.resources, b.fieldKeys, b.fields, b.memberships, b.fileKeys, b.files, b.jobs = nil, nil, nil, nil, nil, nil, nil
	b.formatKeys, b.formats, b.doneJobs = nil, nil, nil
	b.sourceKeys, b.sourceRes = nil, nil
	clear(b.byKey)
	clear(b.sources)
	clear(b.owners)
	return nil
}

// flushOwners writes the held depositors, one statement per depositor.
func (b *bufferedTx) flushOwners(ctx context.Context) error {
	if len(b.owners) == 0 {
		return nil
	}
	byUser := map[int64][]int64{}
	for k, u := range b.owners {
		byUser[u] = append(byUser[u], k)
	}
	for _, u := range slices.Sorted(maps.Keys(byUser)) {
		keys := byUser[u]
		slices.Sort(keys)
		if err := b.tx.SetOwners(ctx, keys, u); err != nil {
			return err
		}
	}
	return nil
}

// Buffered writes.

func (b *bufferedTx) InsertResources(ctx context.Context, rows []*ResourceRow) error {
	for _, r := range rows {
		c := *r
		b.resources = append(b.resources, &c)
		b.byKey[r.Key] = &c
	}
	return nil
}

// PutFields holds back the fields of new resources only; a field of an
// existing resource replaces a stored row, so it flushes and writes at once.
func (b *bufferedTx) PutFields(ctx context.Context, keys []int64, fields []Field) error {
	for _, k := range keys {
		if _, isNew := b.byKey[k]; !isNew {
			if err := b.flush(ctx); err != nil {
				return err
			}
			return b.tx.PutFields(ctx, keys, fields)
		}
	}
	b.fieldKeys = append(b.fieldKeys, keys...)
	b.fields = append(b.fields, fields...)
	return nil
}

func (b *bufferedTx) InsertMemberships(ctx context.Context, ms []Membership) error {
	b.memberships = append(b.memberships, ms...)
	return nil
}

func (b *bufferedTx) InsertFiles(ctx context.Context, keys []int64, files []*File) error {
	b.fileKeys = append(b.fileKeys, keys...)
	b.files = append(b.files, files...)
	return nil
}

// EnqueueJobs holds back new jobs; they are written after the files they
// work on, with the time of the first.
func (b *bufferedTx) EnqueueJobs(ctx context.Context, jobs []NewJob, now time.Time) error {
	if len(b.jobs) == 0 {
		b.jobsAt = now
	}
	b.jobs = append(b.jobs, jobs...)
	return nil
}

// SetFileFormats holds back characterization results (the files exist;
// nothing in a batch reads a format back).
func (b *bufferedTx) SetFileFormats(ctx context.Context, keys []int64, formats []*Format) error {
	b.formatKeys = append(b.formatKeys, keys...)
	b.formats = append(b.formats, formats...)
	return nil
}

// DeleteJobs holds back the removal of finished jobs. JobHeld, the only
// read of a job inside a batch, answers for them from the buffer.
func (b *bufferedTx) DeleteJobs(ctx context.Context, ids []int64) error {
	b.doneJobs = append(b.doneJobs, ids...)
	return nil
}

// JobHeld reports a job finished earlier in the batch as not held.
func (b *bufferedTx) JobHeld(ctx context.Context, id int64, worker string, attempt int) (bool, error) {
	for _, d := range b.doneJobs {
		if d == id {
			return false, nil
		}
	}
	return b.tx.JobHeld(ctx, id, worker, attempt)
}

func (b *bufferedTx) InsertSources(ctx context.Context, sourceKeys []string, keys []int64) error {
	for i, k := range sourceKeys {
		b.sources[k] = keys[i]
	}
	b.sourceKeys = append(b.sourceKeys, sourceKeys...)
	b.sourceRes = append(b.sourceRes, keys...)
	return nil
}

// SetOwners holds back the depositor of new (or existing) resources;
// Owners answers for them from the buffer.
func (b *bufferedTx) SetOwners(ctx context.Context, keys []int64, user int64) error {
	for _, k := range keys {
		b.owners[k] = user
	}
	return nil
}

// Reads the buffer can answer.

func (b *bufferedTx) Sources(ctx context.Context, sourceKeys []string) (map[string]int64, error) {
	out, err := b.tx.Sources(ctx, sourceKeys)
	if err != nil {
		return nil, err
	}
	for _, k := range sourceKeys {
		if v, ok := b.sources[k]; ok {
			out[k] = v
		}
	}
	return out, nil
}

func (b *bufferedTx) Resource(ctx context.Context, key int64) (*ResourceRow, error) {
	if r, ok := b.byKey[key]; ok {
		c := *r
		return &c, nil
	}
	return b.tx.Resource(ctx, key)
}

// ResourceChain reads the chain from the store when the buffer holds no
// resource, else a level at a time through Resource, which answers for the
// held-back rows.
func (b *bufferedTx) ResourceChain(ctx context.Context, key int64, n int) ([]*ResourceRow, error) {
	if len(b.byKey) == 0 {
		return b.tx.ResourceChain(ctx, key, n)
	}
	var out []*ResourceRow
	for k := key; k != 0 && len(out) < n; {
		r, err := b.Resource(ctx, k)
		if err != nil {
			return nil, err
		}
		if r == nil {
			break
		}
		out = append(out, r)
		k = r.Parent
	}
	return out, nil
}

func (b *bufferedTx) Resources(ctx context.Context, keys []int64) ([]*ResourceRow, error) {
	var out []*ResourceRow
	var rest []int64
	for _, k := range keys {
		if r, ok := b.byKey[k]; ok {
			c := *r
			out = append(out, &c)
		} else {
			rest = append(rest, k)
		}
	}
	if len(rest) == 0 {
		return out, nil
	}
	more, err := b.tx.Resources(ctx, rest)
	return append(out, more...), err
}

// MemberOfMany adds the held-back memberships of keys to the store's
// answer. A held-back membership names a collection that its operation
// found live, and nothing has deleted it since: a tombstone, a removed
// membership or an update flushes the buffer first. The cost is one pass
// over the batch's held memberships.
func (b *bufferedTx) MemberOfMany(ctx context.Context, keys []int64) (map[int64][]int64, error) {
	out, err := b.tx.MemberOfMany(ctx, keys)
	if err != nil || len(b.memberships) == 0 {
		return out, err
	}
	if out == nil {
		out = map[int64][]int64{}
	}
	want := make(map[int64]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	for _, m := range b.memberships {
		if want[m.Member] && !slices.Contains(out[m.Member], m.Collection) {
			out[m.Member] = append(out[m.Member], m.Collection)
			slices.Sort(out[m.Member])
		}
	}
	return out, nil
}

// Owners answers the held-back depositors from the buffer and the others
// from the store.
func (b *bufferedTx) Owners(ctx context.Context, keys []int64) (map[int64]int64, error) {
	out, err := b.tx.Owners(ctx, keys)
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = map[int64]int64{}
	}
	for _, k := range keys {
		if u, ok := b.owners[k]; ok {
			out[k] = u
		}
	}
	return out, nil
}

// GrantsTo reads the store alone: the buffer never holds grants back
// (SetGrants flushes and writes at once), and the grants table refers to
// no row the buffer holds.
func (b *bufferedTx) GrantsTo(ctx context.Context, principals []string) ([]Grant, error) {
	return b.tx.GrantsTo(ctx, principals)
}
