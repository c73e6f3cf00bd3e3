package oai

import (
	"context"
	"fmt"
	"regexp"

	"github.com/shelfmark/shelfmark"
)

// Work is what a format renders a record from: a live, public work with its
// metadata and the source records it was catalogued from.
type Work struct {
	// ID is the work's id.
	ID shelfmark.ID
	// Row is the work's resource row.
	Row *shelfmark.ResourceRow
	// Fields is the work's metadata, one Field per predicate, sorted by
	// predicate.
	Fields []shelfmark.Field
	// Sources are the work's files of use shelfmark.UseSource (for example
	// its MARC record), in their order.
	Sources []*shelfmark.File
	// Blobs opens the bytes of managed files.
	Blobs shelfmark.BlobStore
}

// Format is a metadata format the provider disseminates. A format renders
// a work's record once, when the work changes; the provider serves the
// stored bytes. Render must be deterministic: the same work gives the same
// bytes, so a harvester receives the same record until it changes.
type Format interface {
	// Prefix is the metadataPrefix ("oai_dc").
	Prefix() string
	// Schema is the URL of the XML schema of the format.
	Schema() string
	// Namespace is the XML namespace of the format's root element.
	Namespace() string
	// Render returns the content of the record's <metadata> element, or
	// ok false when the work has no record in this format.
	Render(ctx context.Context, w *Work) (payload []byte, ok bool, err error)
}

// prefixPattern is the metadataPrefix pattern of OAI-PMH.xsd.
var prefixPattern = regexp.MustCompile(`^[A-Za-z0-9\-_\.!~\*'\(\)]+$`)

// Registry holds the formats a provider offers, in the order they were
// registered (the order of ListMetadataFormats).
type Registry struct {
	formats  []Format
	byPrefix map[string]Format
}

// NewRegistry returns a registry of formats; prefixes must be valid and
// distinct.
func NewRegistry(formats ...Format) (*Registry, error) {
	r := &Registry{byPrefix: map[string]Format{}}
	for _, f := range formats {
		if err := r.Register(f); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// DefaultRegistry returns the formats Shelfmark offers: oai_dc for every
// public work, and marcxml for works catalogued from a MARC record.
func DefaultRegistry() *Registry {
	r, err := NewRegistry(DublinCore{}, MARCXML{})
	if err != nil {
		panic(err) // the built-in formats have fixed, valid, distinct prefixes
	}
	return r
}

// Register adds a format.
func (r *Registry) Register(f Format) error {
	p := f.Prefix()
	if !prefixPattern.MatchString(p) {
		return fmt.Errorf("oai: format prefix %q is not a valid metadataPrefix", p)
	}
	if _, dup := r.byPrefix[p]; dup {
		return fmt.Errorf("oai: format prefix %q registered twice", p)
	}
	r.formats = append(r.formats, f)
	r.byPrefix[p] = f
	return nil
}

// Lookup returns the format of a prefix, or nil.
func (r *Registry) Lookup(prefix string) Format { return r.byPrefix[prefix] }

// Formats returns the registered formats in order.
func (r *Registry) Formats() []Format { return r.formats }
