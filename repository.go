package shelfmark

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"time"
)

// RepositoryOptions configure a Repository. Zero values pick defaults.
type RepositoryOptions struct {
	// MintBlock is how many keys the minter reserves per database round
	// trip (default 1000).
	MintBlock int
	// MaxBatch caps the operations of one group commit (default 256).
	MaxBatch int
	// Committers is how many transactions may be open at once (default 1
	// on a store whose writers take turns, SQLite's single writer;
	// DefaultParallelCommitters on a ParallelStorage, PostgreSQL).
	Committers int
	// Observer learns of every group commit.
	Observer CommitObserver
	// Logger receives what the engine cannot return to a caller (an audit
	// entry of a refused write that could not be stored); default
	// slog.Default().
	Logger *slog.Logger
	// Now returns the current time (default time.Now).
	Now func() time.Time
	// IDs maps keys to ids (default LegacyIDCodec, for tests; a repository
	// on a real store uses LoadIDCodec).
	IDs *IDCodec
	// MaxListScan bounds the rows a listing page reads past rows its
	// caller may not see (default DefaultMaxListScan).
	MaxListScan int
	// WebLinksPublic opens the web link index (inbound counts, links, top
	// lists) to every caller. It spans every crawl, so by default only
	// readers of the whole repository see it; set it when every crawl is
	// public.
	WebLinksPublic bool
	// WebMergeLinks is how many link changes a repository's web ingests
	// log before it merges the log into the link index (default
	// DefaultWebMergeLinks); a file's last batch always merges.
	WebMergeLinks int
	// WebMergeChunk is how many logged link changes one merge
	// transaction takes (default DefaultWebMergeChunk): it bounds how
	// long a merge holds the database's write lock.
	WebMergeChunk int
}

// Repository is the repository engine: it implements ResourceService over
// any Storage, keeping every rule of the data model in one place.
type Repository struct {
	store  Storage
	minter *Minter
	ids    *IDCodec
	// hidden encodes the keys of rows a caller may not see where a
	// listing's cursor must name one (see ListMembers): the id codec
	// itself would name the hidden row, and a bare key would too under the
	// legacy mapping, so it is a codec of its own.
	hidden  *IDCodec
	maxScan int
	// webLinksPublic opens the link index to everyone.
	webLinksPublic bool
	// web holds the link log's merge settings and what this repository
	// logged since its last merge.
	web    webMerge
	log    *slog.Logger
	commit *committer
	now    func() time.Time
}

var _ ResourceService = (*Repository)(nil)

// DefaultParallelCommitters is how many group commits may be open at once
// on a ParallelStorage, where batches of creates commit side by side while
// any other batch waits its turn (see ParallelStorage): one per two cores.
// On two cores one committer did best for one work per request (its
// batches are larger: 639–749 works/s at 32 clients against 532–649 with
// 2 or 4), while bulk ingest gained 7–21% from 2 and 4; with cores to
// spare, the commits of separate batches overlap instead of queueing.
func DefaultParallelCommitters() int { return max(1, runtime.NumCPU()/2) }

// NewRepository starts an engine over store. Close stops it.
func NewRepository(store Storage, opts RepositoryOptions) *Repository {
	if opts.MintBlock <= 0 {
		opts.MintBlock = 1000
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 256
	}
	if opts.Committers <= 0 {
		opts.Committers = 1
		if _, ok := store.(ParallelStorage); ok {
			opts.Committers = DefaultParallelCommitters()
		}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxListScan <= 0 {
		opts.MaxListScan = DefaultMaxListScan
	}
	if opts.IDs == nil {
		opts.IDs = LegacyIDCodec()
	}
	if opts.WebMergeLinks <= 0 {
		opts.WebMergeLinks = DefaultWebMergeLinks
	}
	if opts.WebMergeChunk <= 0 {
		opts.WebMergeChunk = DefaultWebMergeChunk
	}
	return &Repository{
		store:   store,
		minter:  NewMinter(store, opts.MintBlock),
		ids:     opts.IDs,
		hidden:  hiddenCursorCodec(),
		maxScan: opts.MaxListScan, webLinksPublic: opts.WebLinksPublic,
		web:    webMerge{every: int64(opts.WebMergeLinks), chunk: opts.WebMergeChunk},
		log:    opts.Logger,
		commit: newCommitter(store, opts.Committers, opts.MaxBatch, opts.Observer, opts.Now),
		now:    opts.Now,
	}
}

// Close commits what is queued and stops the engine. It does not close the
// Storage.
func (r *Repository) Close() error {
	r.commit.close()
	return nil
}

// Storage returns the backend the engine runs on.
func (r *Repository) Storage() Storage { return r.store }

// IDs returns the codec between the repository's keys and ids.
func (r *Repository) IDs() *IDCodec { return r.ids }

// refKey decodes an id given inside a request body: a malformed one is the
// client's mistake in the body (400), not a missing resource.
func (r *Repository) refKey(id ID, field string) (int64, error) {
	k, err := r.ids.Key(id)
	if err != nil {
		return 0, &Error{Code: EINVALID, Message: fmt.Sprintf("%s: %s", field, ErrorMessage(err)), Details: map[string]any{"field": field, "id": string(id)}}
	}
	return k, nil
}

// live loads a row and fails with ENOTFOUND or EGONE unless it is live.
func (r *Repository) live(ctx context.Context, tx ReadTx, key int64) (*ResourceRow, error) {
	row, err := tx.Resource(ctx, key)
	if err != nil {
		return nil, err
	}
	return row, r.liveRow(key, row)
}

// liveRow is ENOTFOUND when row (the row of key, read before) is nil and
// EGONE when it is a tombstone.
func (r *Repository) liveRow(key int64, row *ResourceRow) error {
	if row == nil {
		return Errorf(ENOTFOUND, "No resource has the id %s.", r.ids.Encode(key))
	} else if row.Deleted != nil {
		return &Error{Code: EGONE, Message: fmt.Sprintf("The resource %s was deleted.", r.ids.Encode(key)),
			Details: map[string]any{"deleted": row.Deleted.Format(time.RFC3339)}}
	}
	return nil
}

// checkVersion enforces If-Match.
func (r *Repository) checkVersion(row *ResourceRow, ifMatch int64) error {
	if ifMatch != 0 && ifMatch != row.Version {
		return &Error{Code: EPRECONDITION, Message: fmt.Sprintf("The resource %s is at version %d, not %d: read it again and retry.", r.ids.Encode(row.Key), row.Version, ifMatch),
			Details: map[string]any{"current_version": row.Version}}
	}
	return nil
}

// rowResource builds a Resource from a row (no metadata or memberships).
func (r *Repository) rowResource(row *ResourceRow) *Resource {
	var parent ID
	if row.Parent != 0 {
		parent = r.ids.Encode(row.Parent)
	}
	res := new(Resource)
	r.fillResource(res, row, parent)
	return res
}

// fillResource sets *res to the Resource of row, whose parent's id is
// parent (empty without a parent), for resources allocated together (a
// page's, in one slice) whose parents' ids are encoded once for all:
// encoding an id costs ten AES blocks, and a page of a book's children or
// of its file sets' files would otherwise encode the same parent once a
// row.
func (r *Repository) fillResource(res *Resource, row *ResourceRow, parent ID) {
	*res = Resource{
		ID: r.ids.Encode(row.Key), Kind: row.Kind, Visibility: row.Visibility, Embargo: row.Embargo, Lease: row.Lease,
		Version: row.Version, Seq: row.Seq, Created: row.Created, Modified: row.Modified, Deleted: row.Deleted,
	}
	if row.Parent != 0 {
		res.Parent = parent
		if row.Position < UnorderedBase {
			res.Position = int(row.Position)
		}
	}
}

func (r *Repository) encodeKeys(keys []int64) []ID {
	if len(keys) == 0 {
		return nil
	}
	ids := make([]ID, len(keys))
	for i, k := range keys {
		ids[i] = r.ids.Encode(k)
	}
	return ids
}

// FindResource returns a live resource with metadata and memberships.
func (r *Repository) FindResource(ctx context.Context, id ID) (*Resource, error) {
	key, err := r.ids.Key(id)
	if err != nil {
		return nil, err
	}
	return r.findResource(ctx, key, id)
}

// findResource is FindResource for the resource key, whose id is id.
func (r *Repository) findResource(ctx context.Context, key int64, id ID) (*Resource, error) {
	var res *Resource
	c := CallerFrom(ctx)
	err := r.store.View(ctx, func(tx ReadTx) error {
		g := r.guard(tx, c)
		a, err := g.readable(ctx, key)
		if err != nil {
			return err
		}
		row := a.row
		res = r.rowResource(row)
		a.showIn(res)
		fields, err := tx.Fields(ctx, key)
		if err != nil {
			return err
		}
		res.Metadata = StatementsOf(fields)
		var colls []int64
		if row.Kind == KindWork || row.Kind == KindCollection {
			if colls, err = tx.MemberOf(ctx, key); err != nil {
				return err
			}
			res.MemberOf = r.encodeKeys(colls)
		}
		if err := g.hideUnseen(ctx, res, row, a.chain[1:], colls); err != nil {
			return err
		}
		if row.Kind == KindFile {
			if res.File, err = tx.File(ctx, key); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find %s: %w", id, err)
	}
	return res, nil
}

// MintIDs reserves n fresh ids.
func (r *Repository) MintIDs(ctx context.Context, n int) ([]ID, error) {
	if err := mayWrite(CallerFrom(ctx), "reserve ids"); err != nil {
		return nil, err
	}
	keys, err := r.minter.Mint(ctx, n)
	if err != nil {
		return nil, err
	}
	return r.encodeKeys(keys), nil
}

// asInvalid turns a missing or deleted referenced resource into a 400: the
// request body named something that is not there.
func asInvalid(err error, field string) error {
	switch ErrorCode(err) {
	case ENOTFOUND, EGONE:
		return &Error{Code: EINVALID, Message: fmt.Sprintf("%s: %s", field, ErrorMessage(err)), Details: map[string]any{"field": field}}
	}
	return err
}
