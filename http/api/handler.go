// Package api serves the REST API's routes that have left the shell (the
// others are still served by package http): search (of what the caller may read),
// the job queues, a resource's members, children and order, and the
// caller's tokens, the roles, who may read a work's files and the
// requests for access to them, a page's file and a work's thumbnail, and
// the audit trail. Every read goes through the repository with the request's caller
// on its context, so the engine's access policy decides what is answered.
package api

import (
	"context"
	"io"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/preserve"
)

// Handler serves the REST API routes of this package. It holds nothing
// but its dependencies, so it is safe for concurrent use.
type Handler struct {
	deps kit.Deps
	opts Options
}

// Options are the limits the REST API keeps to and the services of the
// shell it uses, set by the shell.
type Options struct {
	// MaxBodyBytes caps a metadata request body (more is 413).
	MaxBodyBytes int64
	// MaxUploadBytes caps one uploaded file (more is 413).
	MaxUploadBytes int64
	// ExternalContentAllow are the URL prefixes a file may point at
	// instead of holding bytes (shelfmark.CheckExternalURL).
	ExternalContentAllow []string
	// BlobRedirect, when the content store presigns URLs, is how long a
	// redirect to one lasts (0: the bytes are always sent by the server).
	BlobRedirect time.Duration
	// Uploads stores and discards the caller's uploads under its quotas.
	Uploads Uploads
	// History, when set, is the preservation copy's history, served as
	// versions (versions.go); nil: the versions routes answer 404.
	History *preserve.History
	// Versions reads the versions of objects in the preservation copy for
	// the resources' events; nil without a copy.
	Versions shelfmark.PreservedVersions
}

// Uploads is the shell's account of the bytes callers send before a work
// names them (per-user and server quotas).
type Uploads interface {
	// Store stores body (size bytes, -1 unknown) as the caller's upload
	// under the caller's quotas and opts.MaxSize, and returns the time
	// the store ended (for Discard).
	Store(ctx context.Context, body io.Reader, size int64, opts shelfmark.PutOptions) (*shelfmark.Blob, time.Time, error)
	// Discard forgets the caller's uploads of shas and removes the bytes
	// nothing else holds; a failure is logged.
	Discard(ctx context.Context, shas []string, storedAt time.Time)
}

// New builds the REST API face from the shell's dependencies.
func New(deps kit.Deps, opts Options) *Handler { return &Handler{deps: deps, opts: opts} }

// Routes are the REST API routes of this package.
func (s *Handler) Routes() []kit.Route {
	routes := []kit.Route{
		{Method: "POST", Pattern: "/api/v1/collections", Handle: s.createOf(shelfmark.KindCollection)},
		{Method: "POST", Pattern: "/api/v1/works", Handle: s.createOf(shelfmark.KindWork)},
		{Method: "POST", Pattern: "/api/v1/filesets", Handle: s.createOf(shelfmark.KindFileSet)},
		{Method: "POST", Pattern: "/api/v1/batch", Handle: s.batch},
		{Method: "POST", Pattern: "/api/v1/blobs", Handle: s.postBlob, Upload: true},
		{Method: "POST", Pattern: "/api/v1/groups", Handle: s.postGroups},
		{Method: "POST", Pattern: "/api/v1/sources/lookup", Handle: s.lookupSources},
		{Method: "GET", Pattern: "/api/v1/resources/{id}", Handle: s.getResource},
		{Method: "PUT", Pattern: "/api/v1/resources/{id}", Handle: s.putResource},
		{Method: "PATCH", Pattern: "/api/v1/resources/{id}", Handle: s.patchResource},
		{Method: "DELETE", Pattern: "/api/v1/resources/{id}", Handle: s.deleteResource},
		{Method: "POST", Pattern: "/api/v1/resources/{id}/files", Handle: s.uploadFile, Upload: true},
		{Method: "GET", Pattern: "/api/v1/resources/{id}/content", Handle: s.getContent},
		{Method: "GET", Pattern: "/api/v1/resources/{id}/events", Handle: s.getEvents},
		{Method: "GET", Pattern: "/api/v1/search", Handle: s.search},
		{Method: "GET", Pattern: "/api/v1/resources/{id}/members", Handle: s.listMembers},
		{Method: "POST", Pattern: "/api/v1/resources/{id}/members", Handle: s.addMembers},
		{Method: "DELETE", Pattern: "/api/v1/resources/{id}/members/{member}", Handle: s.removeMember},
		{Method: "GET", Pattern: "/api/v1/resources/{id}/children", Handle: s.listChildren},
		{Method: "PUT", Pattern: "/api/v1/resources/{id}/order", Handle: s.putOrder},
		{Method: "GET", Pattern: "/api/v1/tokens", Handle: s.listTokens},
		{Method: "POST", Pattern: "/api/v1/tokens", Handle: s.createToken},
		{Method: "DELETE", Pattern: "/api/v1/tokens/{id}", Handle: s.revokeToken},
		{Method: "GET", Pattern: "/api/v1/roles", Handle: s.getRoles},
		{Method: "PUT", Pattern: "/api/v1/roles", Handle: s.putRoles},
		{Method: "GET", Pattern: "/api/v1/resources/{id}/roles", Handle: s.getRoles},
		{Method: "PUT", Pattern: "/api/v1/resources/{id}/roles", Handle: s.putRoles},
		{Method: "GET", Pattern: "/api/v1/resources/{id}/files-access", Handle: s.getFilesAccess}, // files_access.go
		{Method: "PUT", Pattern: "/api/v1/resources/{id}/files-access", Handle: s.putFilesAccess},
		{Method: "GET", Pattern: "/api/v1/resources/{id}/files-default", Handle: s.getFilesDefault},
		{Method: "PUT", Pattern: "/api/v1/resources/{id}/files-default", Handle: s.putFilesDefault},
		{Method: "POST", Pattern: "/api/v1/resources/{id}/access-requests", Handle: s.requestAccess}, // access_requests.go
		{Method: "GET", Pattern: "/api/v1/access-requests", Handle: s.listAccessRequests},
		{Method: "GET", Pattern: "/api/v1/access-requests/{id}", Handle: s.getAccessRequest},
		{Method: "POST", Pattern: "/api/v1/access-requests/{id}", Handle: s.decideAccessRequest},
		{Method: "GET", Pattern: "/api/v1/resources/{id}/access-grants", Handle: s.accessGrants},
		{Method: "DELETE", Pattern: "/api/v1/resources/{id}/access-grants/{principal}", Handle: s.revokeAccessGrant},
		{Method: "PUT", Pattern: "/api/v1/resources/{id}/pages/{page}/file", Handle: s.replacePageFile, Upload: true}, // pages.go
		{Method: "PUT", Pattern: "/api/v1/resources/{id}/thumbnail", Handle: s.putThumbnail},
		{Method: "GET", Pattern: "/api/v1/audit", Handle: s.audit},
		{Method: "GET", Pattern: "/api/v1/usage", Handle: s.usage}, // usage.go
		{Method: "GET", Pattern: "/api/v1/jobs", Handle: s.getJobs, Admin: true},
		{Method: "GET", Pattern: "/api/v1/jobs/{queue}", Handle: s.listJobs, Admin: true},
		{Method: "POST", Pattern: "/api/v1/jobs/{queue}/{action}", Handle: s.queueAction, Admin: true},
	}
	return append(routes, s.versionRoutes()...)
}
