package export

import (
	"context"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/preserve"
)

// DefaultOrganization is the Source-Organization of a bag when
// Options.Organization is empty.
const DefaultOrganization = "Shelfmark repository"

// Options are what an Exporter reads from and how it names its packages.
type Options struct {
	// Organization is bag-info.txt's Source-Organization
	// (DefaultOrganization when empty).
	Organization string
	// Preservation is the repository's preservation copy, or nil when it
	// is off: OCFL copies objects from it.
	Preservation *ocfl.Root
	// Now is the clock (Bagging-Date, the versions OCFL writes); default
	// time.Now.
	Now func() time.Time
	// Events, when set, is asked for the PREMIS events of a bag's object
	// (its state as exported): a PREMIS 3 XML document, or nil for none.
	// A non-empty document is written as the payload file data/premis.xml
	// and listed in every manifest. Nothing sets it yet: Shelfmark does not
	// record PREMIS events so far, and a bag holds no events file until
	// it does.
	Events func(ctx context.Context, st *preserve.State) ([]byte, error)
}

// Exporter writes packages of one repository. It reads the storage
// directly, as the preserver does, so it sees every resource whatever its
// access: it is an administrator's tool (the CLI's export verb).
type Exporter struct {
	store shelfmark.Storage
	blobs shelfmark.BlobStore
	ids   *shelfmark.IDCodec
	opts  Options
}

// New returns an Exporter over the repository's storage, content store
// and id codec.
func New(store shelfmark.Storage, blobs shelfmark.BlobStore, ids *shelfmark.IDCodec, opts Options) *Exporter {
	if opts.Organization == "" {
		opts.Organization = DefaultOrganization
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Exporter{store: store, blobs: blobs, ids: ids, opts: opts}
}
