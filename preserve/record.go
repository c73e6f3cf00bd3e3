package preserve

import (
	"time"

	"github.com/shelfmark/shelfmark"
)

// FormatVersion is the version of the record format (object.json) this
// package writes; a reader refuses a higher one. Version 2 added what a
// rebuild needs beyond version 1: each resource's effective access,
// depositor and source keys, a collection's grants, and the id secret in
// the repository object. A version 1 record still reads: those are then
// missing from what it rebuilds.
const FormatVersion = 2

// Logical paths of an object's files. Originals go under FilesDir, one
// directory per file set (FileDir).
const (
	RecordPath   = "object.json"
	MetadataPath = "metadata.nt"
	FilesDir     = "files"
)

// Record is what object.json holds: what the database knows about the
// resources of one object, readable without Shelfmark. Times are RFC 3339
// in UTC with microseconds, as the database keeps them.
type Record struct {
	// Shelfmark is the record format's version (FormatVersion).
	Shelfmark int `json:"shelfmark"`
	// ID is the id of the object's resource: a work or a collection.
	ID string `json:"id"`
	// Resources are the object's resource first, then its file sets in
	// their order, each followed by its files.
	Resources []Resource `json:"resources"`
}

// Resource is one resource's row: its kind, place, access, times and, for
// a file, its description.
type Resource struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Parent string `json:"parent,omitempty"`
	// Position is the place among the parent's children, 1..n; absent
	// for a child no order names (they follow the ordered ones by key).
	Position int64  `json:"position,omitempty"`
	Source   string `json:"source,omitempty"` // for a derivative: the file it was made from
	// MemberOf lists the collections the resource is a member of.
	MemberOf   []string   `json:"memberOf,omitempty"`
	Visibility string     `json:"visibility"`
	Embargo    *time.Time `json:"embargo,omitempty"`
	Lease      *time.Time `json:"lease,omitempty"`
	// Version counts the resource's changes (its ETag); Seq is the
	// repository-wide sequence number of its last change.
	Version  int64      `json:"version"`
	Seq      int64      `json:"seq"`
	Created  time.Time  `json:"created"`
	Modified time.Time  `json:"modified"`
	Deleted  *time.Time `json:"deleted,omitempty"` // the tombstone
	// Statements counts the resource's metadata statements, which are in
	// metadata.nt with the resource's IRI (SubjectIRI) as their subject.
	Statements int `json:"statements,omitempty"`
	// Effective is who may see the resource once what holds it (and, for
	// a derivative, the file it was made from) is taken into account;
	// absent when it is the resource's own visibility, embargo and lease.
	Effective *Access `json:"effective,omitempty"`
	// Depositor is the name of the user who deposited the resource, when
	// one did.
	Depositor string `json:"depositor,omitempty"`
	// SourceKeys are the keys of the ingest sources the resource was made
	// from (a re-ingest of one finds the resource instead of a new one).
	SourceKeys []string `json:"sourceKeys,omitempty"`
	// Grants are the roles granted on a collection.
	Grants []Grant `json:"grants,omitempty"`
	File   *File   `json:"file,omitempty"`
}

// Access is a visibility with the dates that change it (see
// shelfmark.Access).
type Access struct {
	Visibility string     `json:"visibility"`
	Embargo    *time.Time `json:"embargo,omitempty"`
	Lease      *time.Time `json:"lease,omitempty"`
}

// Grant is a role granted on a collection to a principal: "user:NAME" or
// "group:NAME".
type Grant struct {
	Principal string `json:"principal"`
	Role      string `json:"role"`
}

// File describes a file's bytes. Path is the logical path of the bytes in
// the object when they are kept there (originals; see Keep), empty when
// they are not (derivatives, which can be made again, and external files).
type File struct {
	Name      string `json:"name"`
	MediaType string `json:"mediaType,omitempty"`
	Size      int64  `json:"size"`
	SHA256    string `json:"sha256,omitempty"`
	SHA512    string `json:"sha512,omitempty"`
	// SHA512Stored tells that the database holds SHA512 too (a client
	// sent or asked for it); otherwise the preserver took it from the
	// bytes for the inventory, and a rebuild leaves it out of the file's
	// description as the database had it.
	SHA512Stored bool    `json:"sha512Stored,omitempty"`
	MD5          string  `json:"md5,omitempty"`
	Use          string  `json:"use"`
	ExternalURL  string  `json:"externalUrl,omitempty"`
	Format       *Format `json:"format,omitempty"`
	Path         string  `json:"path,omitempty"`
}

// Format is what characterization found.
type Format struct {
	PRONOM    string `json:"pronom"`
	Name      string `json:"name,omitempty"`
	Version   string `json:"version,omitempty"`
	MediaType string `json:"mediaType,omitempty"`
	Width     int    `json:"width,omitempty"`
	Height    int    `json:"height,omitempty"`
	Pages     int    `json:"pages,omitempty"`
	Note      string `json:"note,omitempty"`
}

// SubjectIRI is the IRI that stands for the resource id in metadata.nt:
// a URN that does not depend on where the repository is served.
func SubjectIRI(id shelfmark.ID) string { return shelfmark.ResourceIRI(id) }

// Keep reports whether a file's bytes are kept in the object: originals
// stored in the content store are; derivatives (thumbnails, access copies,
// tiles, extracted text, OCR) are made again from them, and external
// files are not Shelfmark's to keep.
func Keep(f *shelfmark.File) bool {
	return f.Use == shelfmark.UseOriginal && f.ExternalURL == "" && f.SHA256 != ""
}
