package shelfmark

import (
	"context"
	"time"
)

// bufferedTx gathers the new rows of a whole group commit (resources,
// statements, memberships, files) and writes them with one bulk statement
// per table when the batch ends, instead of a few statements per operation.
// On PostgreSQL that turns hundreds of round trips into a handful.
//
// Correctness: only inserts of brand-new rows are held back. Reads of a
// held-back resource row are answered from the buffer; any other read or
// write that could observe held-back rows flushes them first, so every
// operation still sees the writes of the operations before it.
type bufferedTx struct {
	WriteTx
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
}

func newBufferedTx(tx WriteTx) *bufferedTx {
	return &bufferedTx{WriteTx: tx, byKey: map[int64]*ResourceRow{}, sources: map[string]int64{}}
}

func (b *bufferedTx) pending() bool {
	return len(b.resources)+len(b.fields)+len(b.memberships)+len(b.files)+len(b.sourceKeys)+len(b.jobs)+
		len(b.formatKeys)+len(b.doneJobs) > 0
}

// flush writes what is held back, in dependency order.
func (b *bufferedTx) flush(ctx context.Context) error {
	if !b.pending() {
		return nil
	}
	if len(b.resources) > 0 {
		if err := b.WriteTx.InsertResources(ctx, b.resources); err != nil {
			return err
		}
	}
	if len(b.fields) > 0 {
		if err := b.WriteTx.PutFields(ctx, b.fieldKeys, b.fields); err != nil {
			return err
		}
	}
	if len(b.memberships) > 0 {
		if err := b.WriteTx.InsertMemberships(ctx, b.memberships); err != nil {
			return err
		}
	}
	if len(b.files) > 0 {
		if err := b.WriteTx.InsertFiles(ctx, b.fileKeys, b.files); err != nil {
			return err
		}
	}
	if len(b.sourceKeys) > 0 {
		if err := b.WriteTx.InsertSources(ctx, b.sourceKeys, b.sourceRes); err != nil {
			return err
		}
	}
	if len(b.jobs) > 0 {
		if err := b.WriteTx.EnqueueJobs(ctx, b.jobs, b.jobsAt); err != nil {
			return err
		}
	}
	if len(b.formatKeys) > 0 {
		if err := b.WriteTx.SetFileFormats(ctx, b.formatKeys, b.formats); err != nil {
			return err
		}
	}
	if len(b.doneJobs) > 0 {
		if err := b.WriteTx.DeleteJobs(ctx, b.doneJobs); err != nil {
			return err
		}
	}
	b.resources, b.fieldKeys, b.fields, b.memberships, b.fileKeys, b.files, b.jobs = nil, nil, nil, nil, nil, nil, nil
	b.formatKeys, b.formats, b.doneJobs = nil, nil, nil
	b.sourceKeys, b.sourceRes = nil, nil
	clear(b.byKey)
	clear(b.sources)
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
			return b.WriteTx.PutFields(ctx, keys, fields)
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
	return b.WriteTx.JobHeld(ctx, id, worker, attempt)
}

func (b *bufferedTx) InsertSources(ctx context.Context, sourceKeys []string, keys []int64) error {
	for i, k := range sourceKeys {
		b.sources[k] = keys[i]
	}
	b.sourceKeys = append(b.sourceKeys, sourceKeys...)
	b.sourceRes = append(b.sourceRes, keys...)
	return nil
}

// Reads the buffer can answer.

func (b *bufferedTx) Sources(ctx context.Context, sourceKeys []string) (map[string]int64, error) {
	out, err := b.WriteTx.Sources(ctx, sourceKeys)
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
	return b.WriteTx.Resource(ctx, key)
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
	more, err := b.WriteTx.Resources(ctx, rest)
	return append(out, more...), err
}

// Everything else flushes first.

func (b *bufferedTx) Fields(ctx context.Context, key int64, predicates ...string) ([]Field, error) {
	if err := b.flush(ctx); err != nil {
		return nil, err
	}
	return b.WriteTx.Fields(ctx, key, predicates...)
}

func (b *bufferedTx) MemberOf(ctx context.Context, key int64) ([]int64, error) {
	if err := b.flush(ctx); err != nil {
		return nil, err
	}
	return b.WriteTx.MemberOf(ctx, key)
}

func (b *bufferedTx) Members(ctx context.Context, collection, after int64, limit int) ([]*ResourceRow, error) {
	if err := b.flush(ctx); err != nil {
		return nil, err
	}
	return b.WriteTx.Members(ctx, collection, after, limit)
}

func (b *bufferedTx) Children(ctx context.Context, parent, after int64, limit int) ([]*ResourceRow, error) {
	if err := b.flush(ctx); err != nil {
		return nil, err
	}
	return b.WriteTx.Children(ctx, parent, after, limit)
}

func (b *bufferedTx) File(ctx context.Context, key int64) (*File, error) {
	if err := b.flush(ctx); err != nil {
		return nil, err
	}
	return b.WriteTx.File(ctx, key)
}

func (b *bufferedTx) UpdateResource(ctx context.Context, row *ResourceRow) error {
	if err := b.flush(ctx); err != nil {
		return err
	}
	return b.WriteTx.UpdateResource(ctx, row)
}

func (b *bufferedTx) DeleteMemberships(ctx context.Context, ms []Membership) error {
	if err := b.flush(ctx); err != nil {
		return err
	}
	return b.WriteTx.DeleteMemberships(ctx, ms)
}

func (b *bufferedTx) SetPositions(ctx context.Context, parent int64, children []int64) error {
	if err := b.flush(ctx); err != nil {
		return err
	}
	return b.WriteTx.SetPositions(ctx, parent, children)
}

func (b *bufferedTx) Tombstone(ctx context.Context, key, seq int64, at time.Time) (int64, error) {
	if err := b.flush(ctx); err != nil {
		return 0, err
	}
	return b.WriteTx.Tombstone(ctx, key, seq, at)
}

func (b *bufferedTx) AccessDependents(ctx context.Context, keys []int64) ([]*ResourceRow, error) {
	if err := b.flush(ctx); err != nil {
		return nil, err
	}
	return b.WriteTx.AccessDependents(ctx, keys)
}

func (b *bufferedTx) SetEffectiveAccess(ctx context.Context, rows []*ResourceRow) error {
	if err := b.flush(ctx); err != nil {
		return err
	}
	return b.WriteTx.SetEffectiveAccess(ctx, rows)
}

// FilesHolding reads files, which may be held back.
func (b *bufferedTx) FilesHolding(ctx context.Context, sha string, limit int) ([]HeldFile, error) {
	if err := b.flush(ctx); err != nil {
		return nil, err
	}
	return b.WriteTx.FilesHolding(ctx, sha, limit)
}
