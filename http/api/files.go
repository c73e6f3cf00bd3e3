package api

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// relExternal is the Link relation Fedora clients use to register content
// held elsewhere.
const relExternal = "http://fedora.info/definitions/fcrepo#ExternalContent"

var linkRE = regexp.MustCompile(`<([^>]*)>\s*((?:;\s*[a-zA-Z]+\s*=\s*(?:"[^"]*"|[^;,\s]*)\s*)*)`)
var paramRE = regexp.MustCompile(`;\s*([a-zA-Z]+)\s*=\s*(?:"([^"]*)"|([^;,\s]*))`)

// externalLink finds a Link header with rel=ExternalContent and returns its
// URL and the type parameter.
func externalLink(h http.Header) (target, mediaType string, found bool) {
	for _, v := range h.Values("Link") {
		for _, m := range linkRE.FindAllStringSubmatch(v, -1) {
			params := map[string]string{}
			for _, p := range paramRE.FindAllStringSubmatch(m[2], -1) {
				params[strings.ToLower(p[1])] = p[2] + p[3]
			}
			if params["rel"] == relExternal {
				return m[1], params["type"], true
			}
		}
	}
	return "", "", false
}

// fileName takes the name from ?name=, else Content-Disposition (filename*
// or filename), else "file"; only the last path element is kept (/ and \
// both separate), and a name that cannot be stored (control characters,
// invalid UTF-8, longer than shelfmark.MaxFileNameBytes) is EINVALID, found
// before any byte is stored.
func fileName(r *http.Request) (string, error) {
	name := r.URL.Query().Get("name")
	if name == "" {
		if _, params, err := mime.ParseMediaType(r.Header.Get("Content-Disposition")); err == nil {
			name = params["filename"]
		}
	}
	name, err := shelfmark.CleanFileName(name)
	if name == "" && err == nil {
		name = "file"
	}
	return name, err
}

// urlFileName is the name of external content: the last element of its
// URL's path, or "file" when that cannot be a name.
func urlFileName(u *url.URL) string {
	if name, err := shelfmark.CleanFileName(u.Path); err == nil && name != "" {
		return name
	}
	return "file"
}

// uploadFile handles POST /api/v1/resources/{id}/files: the body is the
// file's bytes, streamed to the content store and checked against the
// client's digests; or, with a Link rel=ExternalContent header, a
// reference to bytes held elsewhere, which are not fetched.
func (s *Handler) uploadFile(w http.ResponseWriter, r *http.Request) error {
	parent := shelfmark.ID(r.PathValue("id"))
	if err := parent.Check(); err != nil {
		return err
	}
	// Check the parent before storing any byte, so that an upload to a
	// missing (404), deleted (410) or wrong (400) parent leaves nothing in
	// the blob store.
	p, err := s.deps.Resources.FindResource(r.Context(), parent)
	if err != nil {
		return err
	}
	if p.Kind != shelfmark.KindFileSet {
		return shelfmark.Errorf(shelfmark.EINVALID, "%s is a %s; files are uploaded to file sets.", parent, p.Kind)
	}
	// and that the caller may add to it, before any byte is stored
	if err := s.deps.Resources.CheckEdit(r.Context(), parent); err != nil {
		return err
	}
	f, storedAt, err := s.receiveFile(r)
	if err != nil {
		return err
	}
	res, err := s.deps.Resources.CreateResource(r.Context(), &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: parent, File: f})
	if err != nil {
		s.discard(r, f, storedAt) // refused: its bytes go at once
		return err
	}
	w.Header().Set("Location", "/api/v1/resources/"+string(res.ID))
	w.Header().Set("ETag", kit.ETag(res.Version))
	return writeResource(w, http.StatusCreated, s.toJSON(r, res))
}

// receiveFile reads the file a request sends, under the rules of every
// route that takes one (POST …/files, PUT …/pages/{page}/file): its name
// (?name=, else Content-Disposition), its media type (Content-Type) and
// use (?use=, original by default) are checked before any byte is
// stored; the body is then streamed to the content store (putBlob), or,
// with a Link rel=ExternalContent header, the file names bytes held at a
// URL the allow-list allows, which are not fetched. storedAt is when the
// bytes were stored (zero for external content), for discard.
func (s *Handler) receiveFile(r *http.Request) (f *shelfmark.File, storedAt time.Time, err error) {
	use := r.URL.Query().Get("use")
	if use == "" {
		use = shelfmark.UseOriginal
	}
	name, err := fileName(r)
	if err != nil {
		return nil, time.Time{}, err
	}
	f = &shelfmark.File{Name: name, MediaType: kit.MediaTypeOf(r), Use: use}
	if err := shelfmark.CheckFile(f); err != nil { // a bad media type or use, before any byte is stored
		return nil, time.Time{}, err
	}
	if target, typ, ok := externalLink(r.Header); ok {
		if err := shelfmark.CheckExternalURL(s.opts.ExternalContentAllow, target); err != nil {
			return nil, time.Time{}, err
		}
		u, _ := url.Parse(target) // CheckExternalURL parsed it: an absolute http(s) URL
		f.ExternalURL, f.Size = u.String(), -1
		if typ != "" {
			f.MediaType = typ
		}
		if f.Name == "file" {
			f.Name = urlFileName(u)
		}
	}
	if f.ExternalURL == "" {
		blob, at, err := s.putBlob(r)
		if err != nil {
			return nil, time.Time{}, err
		}
		storedAt = at
		f.Size = blob.Size
		f.SHA256, f.SHA512, f.MD5 = blob.Digests[shelfmark.SHA256], blob.Digests[shelfmark.SHA512], blob.Digests[shelfmark.MD5]
	}
	if f.MediaType == "" {
		f.MediaType = "application/octet-stream"
	}
	return f, storedAt, nil
}

// discard forgets the bytes receiveFile stored for a request that was
// then refused (nothing for external content).
func (s *Handler) discard(r *http.Request, f *shelfmark.File, storedAt time.Time) {
	if !storedAt.IsZero() {
		s.opts.Uploads.Discard(r.Context(), []string{f.SHA256}, storedAt)
	}
}

// putBlob streams a request body to the content store, durably, under the
// upload limit (413) and the caller's quotas (507, refused before the body
// is read when a quota is reached or the body's stated length is past
// it): it verifies the digests the client sent (Content-Digest,
// Repr-Digest, Digest; a mismatch is EDIGESTMISMATCH and nothing is kept)
// and computes those ?digests= asks for besides SHA-256. The bytes are
// recorded as the caller's upload (see quota.go), and the time their store
// ended returned for a refusal to discard them.
func (s *Handler) putBlob(r *http.Request) (*shelfmark.Blob, time.Time, error) {
	if r.ContentLength > s.opts.MaxUploadBytes {
		return nil, time.Time{}, &shelfmark.Error{Code: shelfmark.ETOOLARGE, Message: fmt.Sprintf("The file is %d bytes; this server accepts files up to %d bytes.", r.ContentLength, s.opts.MaxUploadBytes),
			Details: map[string]any{"limit": s.opts.MaxUploadBytes}}
	}
	digests, err := kit.RequestDigests(r.Header)
	if err != nil {
		return nil, time.Time{}, err
	}
	opts := shelfmark.PutOptions{MaxSize: s.opts.MaxUploadBytes, Expect: digests}
	for _, a := range strings.Split(r.URL.Query().Get("digests"), ",") {
		switch alg := shelfmark.DigestAlgorithm(strings.TrimSpace(a)); alg {
		case shelfmark.SHA512, shelfmark.MD5:
			opts.Compute = append(opts.Compute, alg)
		case "", shelfmark.SHA256:
		default:
			return nil, time.Time{}, shelfmark.Errorf(shelfmark.EINVALID, "digests: %q is not one of sha-256, sha-512, md5.", a)
		}
	}
	for _, d := range digests {
		if d.Algorithm == shelfmark.SHA512 || d.Algorithm == shelfmark.MD5 {
			opts.Compute = append(opts.Compute, d.Algorithm)
		}
	}
	return s.opts.Uploads.Store(r.Context(), r.Body, r.ContentLength, opts)
}

// getContent serves a file's bytes with Range support, or redirects to
// external content.
func (s *Handler) getContent(w http.ResponseWriter, r *http.Request) error {
	res, err := s.deps.Resources.FindResource(r.Context(), shelfmark.ID(r.PathValue("id")))
	if err != nil {
		return err
	}
	if res.Kind != shelfmark.KindFile || res.File == nil {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is a %s; only files have content.", res.ID, res.Kind)
	}
	f := res.File
	if !f.Managed() {
		// The allow-list may have changed since the link was registered.
		if err := shelfmark.CheckExternalURL(s.opts.ExternalContentAllow, f.ExternalURL); err != nil {
			return &shelfmark.Error{Code: shelfmark.EFORBIDDEN,
				Message: fmt.Sprintf("The content of %s is held at a URL this server's external content allow-list no longer allows.", res.ID)}
		}
		http.Redirect(w, r, f.ExternalURL, http.StatusTemporaryRedirect)
		return nil
	}
	if es, ok := s.deps.Resources.(shelfmark.EventService); ok {
		// fixity found no whole copy: an error before any byte, never
		// bytes that look whole (damaged.go)
		if err := refuseDamaged(r.Context(), es, res.ID); err != nil {
			return err
		}
	}
	if p, ok := s.deps.Blobs.(shelfmark.BlobPresigner); ok && s.opts.BlobRedirect > 0 && r.Method == http.MethodGet && r.Header.Get("Range") == "" {
		u, err := p.Presign(r.Context(), f.SHA256, shelfmark.PresignOptions{TTL: s.opts.BlobRedirect,
			ContentType: f.MediaType, ContentDisposition: kit.ContentDisposition(f.Name, f.MediaType)})
		if err != nil {
			return err
		}
		if u != "" { // "" for bytes only this server can serve
			w.Header().Set("Cache-Control", "private, no-store")
			http.Redirect(w, r, u, http.StatusTemporaryRedirect)
			return nil
		}
	}
	rc, err := s.deps.Blobs.Open(r.Context(), f.SHA256)
	if err != nil {
		return err
	}
	defer rc.Close()
	h := w.Header()
	h.Set("Content-Type", f.MediaType)
	h.Set("ETag", `"`+f.SHA256+`"`)
	if raw, err := hex.DecodeString(f.SHA256); err == nil {
		h.Set("Repr-Digest", "sha-256=:"+base64Std(raw)+":")
	}
	h.Set("Content-Disposition", kit.ContentDisposition(f.Name, f.MediaType))
	h.Set("X-Content-Type-Options", "nosniff")
	sent := r.Header.Get("Range")
	if sent != "" {
		// the ranges are judged against the size (ServeContent finds it
		// by seeking too; without a Range it is its only lookup)
		size, err := rc.Seek(0, io.SeekEnd)
		if err != nil {
			return fmt.Errorf("content of %s: %w", res.ID, err)
		}
		if _, err := rc.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("content of %s: %w", res.ID, err)
		}
		kit.NormalizeRange(r, size)
	}
	http.ServeContent(&jsonErrorWriter{ResponseWriter: w, r: r, rangeSent: sent}, r, "", res.Created, rc)
	return nil
}

// jsonErrorWriter turns the bare error responses http.ServeContent writes
// (412 for a failed If-Match, 416 for a range outside the file) into the
// API's JSON errors, keeping headers such as Content-Range.
type jsonErrorWriter struct {
	http.ResponseWriter
	r       *http.Request
	swallow bool
	// rangeSent is the Range the client sent, before kit.NormalizeRange.
	rangeSent string
}

func (w *jsonErrorWriter) WriteHeader(code int) {
	var err *shelfmark.Error
	switch code {
	case http.StatusPreconditionFailed:
		err = shelfmark.Errorf(shelfmark.EPRECONDITION, "If-Match names another version of these bytes; their ETag is %s.", w.Header().Get("ETag"))
	case http.StatusRequestedRangeNotSatisfiable:
		err = &shelfmark.Error{Code: kit.ERANGE, Message: fmt.Sprintf("The range %.200q lies outside the file (%s).", w.rangeSent, w.Header().Get("Content-Range")),
			Details: map[string]any{"content_range": w.Header().Get("Content-Range")}}
	}
	if err == nil {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.swallow = true
	kit.WriteError(w.ResponseWriter, w.r, err)
}

func (w *jsonErrorWriter) Write(b []byte) (int, error) {
	if w.swallow {
		return len(b), nil // ServeContent's plain-text body, replaced by the JSON above
	}
	return w.ResponseWriter.Write(b)
}

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
