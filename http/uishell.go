package http

// This file holds what the shell hands the web interface (package ui):
// its options, the services the shell keeps (password sign-in, the upload
// quotas and slots, the web archive routes' readers, the job metrics), the
// mounting of its routes beside IIIF's, and the two questions about paths
// the envelope asks before any route (is this a page, does a browser ask).

import (
	"context"
	"github.com/shelfmark/shelfmark/http/admission"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/ui"
	"github.com/shelfmark/shelfmark/http/webarchive"
	"github.com/shelfmark/shelfmark/warc"
)

// newUIHandler builds the interface with the shell's options and
// services; an error is a fault of the build (its embedded templates).
func (s *Server) newUIHandler() (*ui.Handler, error) {
	o := s.opts
	return ui.New(s.deps, ui.Options{MaxBodyBytes: o.MaxBodyBytes, MaxUploadBytes: o.MaxUploadBytes, StagingDir: o.StagingDir, ImportRoots: o.ImportRoots,
		MaxBulkUploadBytes: o.MaxBulkUploadBytes, MaxBulkExpandBytes: o.MaxBulkExpandBytes, MaxZipRatio: o.MaxZipRatio,
		MaxBulkPreviews: o.MaxBulkPreviews, MaxBulkPreviewsPerUser: o.MaxBulkPreviewsPerUser,
		SignIn: uiSignIn{s}, SingleSignOn: s.oidc != nil, Uploads: uploads{s}, WebArchive: uiWebArchive{s.webarchive},
		JobSeconds: s.metrics.jobSeconds, History: o.History, Robots: o.Robots,
		SiteName: o.SiteName, Institution: o.Institution, Admission: func() []admission.Stats { return s.admission.Snapshot() },
		AdmissionShared: func() admission.Stats { return s.admission.SharedStats(admission.Anonymous) }, Backlog: uiBacklog(o.Backlog)})
}

// uiBacklog is the dashboard's view of the backlog gate: nil without one
// (a nil *BacklogGate in the interface would not be nil).
func uiBacklog(g *shelfmark.BacklogGate) ui.Backlog {
	if g == nil {
		return nil
	}
	return g
}

// uiRoutes are the interface's routes and IIIF's, which the shell
// registers with compression for every one.
func (s *Server) uiRoutes() []route {
	rs := s.faceRoutes(s.ui.Routes())
	return append(rs, s.faceRoutes(s.iiif.Routes())...) // IIIF (package iiif)
}

// uiSignIn is the shell's password sign-in, for the sign-in form.
type uiSignIn struct{ s *Server }

// PasswordLogin implements ui.SignIn (passwordLogin, accounts.go).
func (u uiSignIn) PasswordLogin(r *http.Request, name, password string) (string, *shelfmark.Caller, error) {
	return u.s.passwordLogin(r, name, password)
}

// EndSession implements ui.SignIn (endSession, accounts.go).
func (u uiSignIn) EndSession(w http.ResponseWriter, r *http.Request) error {
	return u.s.endSession(w, r)
}

// uploads is the shell's account of uploads (quota.go) and its upload
// slots, for the REST API's uploads, the deposit form and bulk ingests
// (ui.Uploads, api.Uploads).
type uploads struct{ s *Server }

// Store implements ui.Uploads (storeUpload).
func (u uploads) Store(ctx context.Context, body io.Reader, size int64, opts shelfmark.PutOptions) (*shelfmark.Blob, time.Time, error) {
	return u.s.storeUpload(ctx, body, size, opts)
}

// Keep implements ui.Uploads: a bulk run's stored files, already counted
// towards the quota as staged files.
func (u uploads) Keep(ctx context.Context, blobs []*shelfmark.Blob, storedAt time.Time) error {
	return u.s.keepUploads(ctx, blobs, storedAt, false)
}

// Discard implements ui.Uploads (dropUploads).
func (u uploads) Discard(ctx context.Context, shas []string, storedAt time.Time) {
	u.s.dropUploads(ctx, shas, storedAt)
}

// Room implements ui.Uploads (room).
func (u uploads) Room(c *shelfmark.Caller, use shelfmark.UploadUsage) (int64, error) {
	return u.s.room(c, quotaUsage{files: use.Files, bytes: use.Bytes, allBytes: use.AllBytes})
}

// OverQuota implements ui.Uploads (overQuota).
func (u uploads) OverQuota(c *shelfmark.Caller, use shelfmark.UploadUsage) error {
	return u.s.overQuota(c, quotaUsage{files: use.Files, bytes: use.Bytes, allBytes: use.AllBytes})
}

// Admit implements ui.Uploads: a slot of Options.MaxConcurrentUploads,
// shared with the API's uploads.
func (u uploads) Admit(ctx context.Context) (release func(), err error) {
	return u.s.admitUpload(ctx)
}

// uiWebArchive hands the interface's web archive pages what they share
// with the web archive routes (package webarchive).
type uiWebArchive struct{ h *webarchive.Handler }

// Index implements ui.WebArchive (webarchive.Handler.Index).
func (w uiWebArchive) Index() (ui.WebIndex, error) {
	wi, err := w.h.Index()
	if err != nil {
		return nil, err
	}
	return wi, nil
}

// Open implements ui.WebArchive (webarchive.Handler.Open).
func (w uiWebArchive) Open(ctx context.Context, c *shelfmark.Capture) (*warc.Record, func(), error) {
	o, err := w.h.Open(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	return o.Record, o.Close, nil
}

// CaptureQuery implements ui.WebArchive (webarchive.CaptureQuery).
func (uiWebArchive) CaptureQuery(v url.Values) (shelfmark.WebCaptureQuery, error) {
	return webarchive.CaptureQuery(v)
}

// DomainParam implements ui.WebArchive (webarchive.DomainParam).
func (uiWebArchive) DomainParam(name, raw string) (string, error) {
	return webarchive.DomainParam(name, raw)
}

// Canonical implements ui.WebArchive (webarchive.Canonical).
func (uiWebArchive) Canonical(name, raw string) (shelfmark.WebURL, error) {
	return webarchive.Canonical(name, raw)
}

// CaptureID implements ui.WebArchive (webarchive.CaptureID).
func (uiWebArchive) CaptureID(s string) (int64, error) { return webarchive.CaptureID(s) }

// wantsHTML reports whether a request no route takes came from a browser
// reading pages (its 404 is then a page, not JSON).
func wantsHTML(r *http.Request) bool {
	if strings.HasPrefix(r.URL.Path, "/api/") || r.URL.Path == "/oai" {
		return false
	}
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

// uiPath reports whether a request reads one of the interface's pages,
// where a browser still holding an ended session is shown the page as to
// anyone signed out (and its cookie is cleared), instead of an error.
func uiPath(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	p := r.URL.Path
	return !strings.HasPrefix(p, "/api/") && p != "/oai" && p != "/metrics" && p != "/healthz" && p != "/readyz" && !strings.HasPrefix(p, "/debug/")
}
