package shelfmark

import (
	"context"
	"io"
	"time"
)

// Kind is the PCDM class of a resource.
type Kind string

// The kinds of resource.
const (
	KindCollection Kind = "collection" // pcdm:Collection
	KindWork       Kind = "work"       // pcdm:Object
	KindFileSet    Kind = "fileset"    // a page or file holder (Hydra Works FileSet)
	KindFile       Kind = "file"       // pcdm:File: bytes, managed or external
)

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool {
	switch k {
	case KindCollection, KindWork, KindFileSet, KindFile:
		return true
	}
	return false
}

// Visibility says who may see a resource.
type Visibility string

// The visibilities.
const (
	// Public resources are seen by everyone.
	Public Visibility = "public"
	// Authenticated resources are seen by every signed-in user.
	Authenticated Visibility = "authenticated"
	// Private resources are seen by their depositor, by those holding a
	// role on a collection they belong to, and by administrators.
	Private Visibility = "private"
)

// Valid reports whether v is a known visibility.
func (v Visibility) Valid() bool {
	return v == Public || v == Authenticated || v == Private
}

// ParseVisibility reads a visibility from a request; "" is Public, and
// "restricted" (the name of Authenticated in earlier releases) is
// Authenticated.
func ParseVisibility(s string) (Visibility, error) {
	switch v := Visibility(s); {
	case s == "":
		return Public, nil
	case s == "restricted":
		return Authenticated, nil
	case v.Valid():
		return v, nil
	}
	return "", Errorf(EINVALID, "visibility %q is not one of public, authenticated, private.", s)
}

// Resource is a stored collection, work, file set or file.
type Resource struct {
	ID         ID
	Kind       Kind
	Visibility Visibility
	// Embargo, when set, keeps the resource private until then; from then
	// on Visibility applies.
	Embargo *time.Time
	// Lease, when set, keeps the resource public until then; from then on
	// it is private.
	Lease *time.Time
	// Parent is the work (for file sets and works) or file set (for files)
	// that holds this resource as an ordered child; "" when none.
	Parent ID
	// Position is the 1-based place among the parent's children once an
	// order was set, and 0 while the child is unordered.
	Position int
	// MemberOf lists the collections this resource belongs to (rule R1:
	// stored on the member).
	MemberOf []ID
	// Metadata holds the RDF statements whose subject is the resource.
	Metadata []Statement
	// File is set for resources of kind file.
	File *File
	// Version increases with every change of the resource itself and is
	// its ETag.
	Version int64
	// Seq is the sequence number of the resource's last committed change.
	Seq      int64
	Created  time.Time
	Modified time.Time
	// Deleted is set on a tombstone.
	Deleted *time.Time
}

// NewResource is a request to create a resource.
type NewResource struct {
	// ID, when set, is an id obtained from MintIDs (an RDF body's "<>"
	// must resolve to the resource before it exists); otherwise one is
	// minted.
	ID         ID
	Kind       Kind
	Visibility Visibility // default Public
	Embargo    *time.Time
	Lease      *time.Time
	Parent     ID   // optional: the work (or file set, for files) that holds it
	MemberOf   []ID // optional: collections
	Metadata   []Statement
	// File describes the bytes of a resource of kind file.
	File *File
	// source, for a derivative the background pipeline makes, is the key
	// of the file it was made from (whose access it then shares).
	source int64
}

// ResourceUpdate is a change to an existing resource. Nil fields are left
// as they are. IfMatch, when non-zero, must equal the current version.
type ResourceUpdate struct {
	IfMatch int64
	// Replace, when non-nil, becomes the whole metadata (only the
	// difference is written, rule R3).
	Replace *[]Statement
	// Add and Remove patch the metadata; they are applied after Replace.
	Add    []Statement
	Remove []Statement
	// Visibility, Embargo and Lease change the access fields.
	Visibility *Visibility
	Embargo    **time.Time
	Lease      **time.Time
}

// Cursor is an opaque position in a keyset-paginated list.
type Cursor string

// PageRequest asks for one page of a list.
type PageRequest struct {
	After Cursor // "" for the first page
	Limit int    // clamped to [1, MaxPageSize]
	// Metadata asks for the items' metadata, read for the whole page in
	// one more statement (a listing leaves it out otherwise).
	Metadata bool
}

// MaxPageSize caps the items of one listing page.
const MaxPageSize = 1000

// Page is one page of a list; Next is "" on the last page.
type Page struct {
	Items []*Resource
	Next  Cursor
}

// ResourceService is the repository as the API sees it.
type ResourceService interface {
	UploadService
	// IDs returns the codec between database keys and ids.
	IDs() *IDCodec
	// CheckEdit answers nil when the caller may change the resource, and
	// otherwise the error a change would get (404, 401 or 403).
	CheckEdit(ctx context.Context, id ID) error
	// CheckDelete answers nil when the caller may delete the resource, and
	// otherwise the error a delete would get.
	CheckDelete(ctx context.Context, id ID) error
	// MintIDs reserves n fresh ids for resources about to be created.
	MintIDs(ctx context.Context, n int) ([]ID, error)
	// CreateResource mints an id and stores a new resource.
	CreateResource(ctx context.Context, r *NewResource) (*Resource, error)
	// CreateResources stores several resources in one commit; each gets
	// its own id and result. Errors are per item.
	CreateResources(ctx context.Context, rs []*NewResource) ([]*Resource, []error)
	// FindResource returns a resource with its metadata and memberships;
	// EGONE for a tombstone.
	FindResource(ctx context.Context, id ID) (*Resource, error)
	// UpdateResource applies a change and returns the new state.
	UpdateResource(ctx context.Context, id ID, u ResourceUpdate) (*Resource, error)
	// DeleteResource leaves a tombstone for id and its descendants.
	DeleteResource(ctx context.Context, id ID, ifMatch int64) error
	// AddMembers puts resources into a collection.
	AddMembers(ctx context.Context, collection ID, members []ID) error
	// RemoveMembers takes resources out of a collection.
	RemoveMembers(ctx context.Context, collection ID, members []ID) error
	// ListMembers pages through a collection's members in a stable order.
	ListMembers(ctx context.Context, collection ID, p PageRequest) (*Page, error)
	// ListResources pages through the works without a parent, or the
	// collections in no collection, newest first, as far as the caller
	// may see them.
	ListResources(ctx context.Context, kind Kind, p PageRequest) (*Page, error)
	// Workspace pages through the works a signed-in caller looks after
	// (see Repository.Workspace).
	Workspace(ctx context.Context, q WorkspaceQuery) (*WorkspacePage, error)
	// ChangeWorks applies one change to chosen works or to every work a
	// workspace query lists (see Repository.ChangeWorks).
	ChangeWorks(ctx context.Context, q WorkspaceQuery, ids []ID, ch WorkChange, progress func(WorkChangeProgress)) (WorkChangeProgress, error)
	// UsageTotalsOf, UsageReport and UsageTop read the uses of works
	// counted by COUNTER's rules (see Repository.UsageReport).
	UsageTotalsOf(ctx context.Context, id ID) (*UsageTotals, error)
	UsageReport(ctx context.Context, id ID, from, to int) (*UsageReport, error)
	UsageTop(ctx context.Context, month int, metric UsageMetric, limit int) ([]UsageItem, error)
	// PlanBatchEdit reads a batch edit's CSV into what it would change
	// (see Repository.PlanBatchEdit); ApplyBatchEdit applies a plan.
	PlanBatchEdit(ctx context.Context, in io.Reader) (*BatchEditPlan, error)
	ApplyBatchEdit(ctx context.Context, plan *BatchEditPlan, progress func(WorkChangeProgress)) (WorkChangeProgress, error)
	// SetOrder orders a work's children in one step (rule R2); children
	// not named become unordered and follow the ordered ones.
	SetOrder(ctx context.Context, parent ID, children []ID, ifMatch int64) (*Resource, error)
	// SetPageLabels sets the labels (titles) of pages of a work in one
	// step (see Repository.SetPageLabels).
	SetPageLabels(ctx context.Context, work ID, labels []PageLabel, ifMatch int64) (*Resource, error)
	// SetFilesAccess, FilesAccess and FilesRestricted are the access of a
	// work's files apart from its record's (files_access.go).
	SetFilesAccess(ctx context.Context, work ID, a Access, ifMatch int64) (*Resource, error)
	FilesAccess(ctx context.Context, work ID) (Access, bool, error)
	FilesRestricted(ctx context.Context, work ID) (bool, Access, error)
	// CollectionFilesDefault and SetCollectionFilesDefault are who may
	// read the files of works deposited into a collection, by default.
	CollectionFilesDefault(ctx context.Context, coll ID) (Visibility, error)
	SetCollectionFilesDefault(ctx context.Context, coll ID, v Visibility) error
	// ReplacePageFile makes a file the original of a page of a work, the
	// page's files before it deleted, in one step under the work's version
	// (see Repository.ReplacePageFile).
	ReplacePageFile(ctx context.Context, work, page ID, f *File, ifMatch int64) (*Resource, error)
	// SetThumbnailPage chooses the page that represents a work (its
	// thumbnail), or none for its first page, under the work's version
	// (see Repository.SetThumbnailPage).
	SetThumbnailPage(ctx context.Context, work, page ID, ifMatch int64) (*Resource, error)
	// ListChildren pages through a resource's children in order.
	ListChildren(ctx context.Context, parent ID, p PageRequest) (*Page, error)
	// ChildCursor is the cursor from which ListChildren starts at child.
	ChildCursor(child *Resource) (Cursor, error)
	// FindResources returns the live resources among ids the caller may
	// read, with their metadata (not their memberships or files), in the
	// order of ids; the others are left out, as if absent. The metadata of
	// all of them is read in one statement.
	FindResources(ctx context.Context, ids []ID) ([]*Resource, error)
	// ChildFiles returns the live files the caller may read held by each
	// of children (children of parent, such as a page of ListChildren),
	// by child id, in order: at most MaxChildFiles of each, read in a
	// number of statements that does not depend on the number of children.
	ChildFiles(ctx context.Context, parent ID, children []ID) (map[ID][]*Resource, error)
	// ListPages is ListChildren of a work with the files of its pages,
	// of each file only what a viewer reads, in one read of a fixed
	// number of statements (see Repository.ListPages); into buf's memory
	// when buf is not nil, valid until buf is read into again.
	ListPages(ctx context.Context, work ID, p PageRequest, buf *PageBuffer) (*PagesPage, error)
	// CreateGroups stores groups (an ingest item each: a work with its file
	// sets, files and order), each atomically, sharing group commits; it
	// returns each group's root or its error (ECONFLICT with Details["id"]
	// for a source key stored before).
	CreateGroups(ctx context.Context, gs []*NewGroup) ([]*Resource, []error)
	// SearchReader returns who a search within tx is for: what the
	// caller of ctx may read beyond public view (nil for an anonymous
	// caller), for SearchQuery.Reader.
	SearchReader(ctx context.Context, tx ReadTx) (*SearchReader, error)
	// HitThumbnails returns, within tx, a thumbnail file the caller of ctx
	// may read for each of a page of search hits, by hit key (a work's best
	// page's, or the page's that represents it); the others are absent.
	// meta is the metadata of the hits' works when read already (nil: it
	// is read). Two statements for any number of hits in public view
	// (three without meta).
	HitThumbnails(ctx context.Context, tx ReadTx, hits []SearchHit, meta map[int64][]Statement) (map[int64]ID, error)
	// FindSources returns the root ids of the source keys stored before,
	// so that a bulk ingest skips them without sending their bytes.
	FindSources(ctx context.Context, sourceKeys []string) (map[string]ID, error)
}
