package api

// Versions over HTTP (Memento, RFC 7089). The preservation copy keeps a
// version of each work and collection per change window; these routes
// read them back:
//
//	GET  /api/v1/resources/{id}/versions                 the TimeMap
//	GET  /api/v1/resources/{id}/versions/{v}             a memento
//	GET  /api/v1/resources/{id}/versions/{v}/content     a file's bytes at v
//	POST /api/v1/resources/{id}/versions/{v}/restore     make the resource v again
//
// and GET /api/v1/resources/{id} is its own TimeGate: with
// Accept-Datetime it redirects (302) to the memento in force at that
// time. Past states obey the access policy as the resource does (see
// shelfmark.Repository.CheckPast): what the caller may not read now is
// 404, and a caller who may not edit the resource sees only the versions
// whose recorded access would let it read them now.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/preserve"
	"github.com/shelfmark/shelfmark/rdf"
)

// linkFormat is the media type of a TimeMap (RFC 6690).
const linkFormat = "application/link-format"

// MementoJSON describes the version a memento's JSON comes from.
type MementoJSON struct {
	Version  int    `json:"version"`
	Datetime string `json:"datetime"`
	Message  string `json:"message,omitempty"`
	// Deleted is the tombstone's time when the version records the
	// resource's deletion.
	Deleted *string `json:"deleted,omitempty"`
}

// TimeMapJSON is the JSON TimeMap of a resource.
type TimeMapJSON struct {
	Original string `json:"original"`
	TimeMap  string `json:"timemap"`
	TimeGate string `json:"timegate"`
	// Truncated: older versions were not looked at (the History's
	// bounds).
	Truncated bool               `json:"truncated"`
	Mementos  []TimeMapEntryJSON `json:"mementos"`
}

// TimeMapEntryJSON is one memento of a TimeMap.
type TimeMapEntryJSON struct {
	Version    int    `json:"version"`
	Datetime   string `json:"datetime"`
	Message    string `json:"message,omitempty"`
	Visibility string `json:"visibility"`
	Deleted    bool   `json:"deleted,omitempty"`
	URL        string `json:"url"`
}

// RestoreJSON is the answer of a restore: the resource as it now is, the
// version it was made equal to, and what was not brought back.
type RestoreJSON struct {
	Resource    json.RawMessage `json:"resource"`
	From        MementoJSON     `json:"from"`
	NotRestored []string        `json:"notRestored"`
}

// versionRoutes are the routes of this file.
func (s *Handler) versionRoutes() []kit.Route {
	return []kit.Route{
		{Method: "GET", Pattern: "/api/v1/resources/{id}/versions", Handle: s.getTimeMap},
		{Method: "GET", Pattern: "/api/v1/resources/{id}/versions/{v}", Handle: s.getMemento},
		{Method: "GET", Pattern: "/api/v1/resources/{id}/versions/{v}/content", Handle: s.getMementoContent},
		{Method: "POST", Pattern: "/api/v1/resources/{id}/versions/{v}/restore", Handle: s.restoreVersion},
	}
}

// history is the preservation copy's history, or the error that says
// there is none on this server.
func (s *Handler) history() (*preserve.History, shelfmark.PastChecker, error) {
	pc, ok := s.deps.Resources.(shelfmark.PastChecker)
	if s.opts.History == nil || !ok {
		return nil, nil, shelfmark.Errorf(shelfmark.ENOTFOUND,
			"This server keeps no preservation copy (serve --preservation), so it has no versions to serve.")
	}
	return s.opts.History, pc, nil
}

// timeLinks adds the Memento links of the resource id: itself as the
// original resource and its own TimeGate, and its TimeMap.
func (s *Handler) timeLinks(w http.ResponseWriter, r *http.Request, id shelfmark.ID) {
	self := s.resourceIRI(r, id)
	h := w.Header()
	h.Add("Link", `<`+self+`>; rel="original timegate"`)
	h.Add("Link", `<`+self+`/versions>; rel="timemap"; type="`+linkFormat+`"`)
}

// visibleTimeline is the timeline of id with only the versions the caller
// may read (preserve.History.Visible).
func (s *Handler) visibleTimeline(r *http.Request, id shelfmark.ID) (*preserve.Timeline, error) {
	h, pc, err := s.history()
	if err != nil {
		return nil, err
	}
	return h.Visible(r.Context(), pc, id)
}

// visibleMemento is the memento of id at the path's version if the caller
// may read it (preserve.History.VisibleMemento).
func (s *Handler) visibleMemento(r *http.Request, id shelfmark.ID) (*preserve.Memento, error) {
	h, pc, err := s.history()
	if err != nil {
		return nil, err
	}
	n, err := versionNumber(r.PathValue("v"))
	if err != nil {
		return nil, err
	}
	return h.VisibleMemento(r.Context(), pc, id, n)
}

// versionNumber reads the {v} of a path: a version number, 1 or more.
func versionNumber(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(s, "v"))
	if err != nil || n < 1 || n > 1<<30 {
		return 0, shelfmark.Errorf(shelfmark.EINVALID, "%.40q is not a version number (1, 2, …).", s)
	}
	return n, nil
}

// timegate answers GET /api/v1/resources/{id} with Accept-Datetime: a
// 302 to the memento in force at that time (the newest created at or
// before it; the first for a time before it, the last for a time after
// the last).
func (s *Handler) timegate(w http.ResponseWriter, r *http.Request, accept string) error {
	id := shelfmark.ID(r.PathValue("id"))
	at, err := http.ParseTime(strings.TrimSpace(accept))
	if err != nil {
		return &shelfmark.Error{Code: shelfmark.EINVALID,
			Message: fmt.Sprintf("Accept-Datetime %.80q is not an HTTP date (such as %q).", accept, "Tue, 20 Jun 2000 18:02:59 GMT"),
			Details: map[string]any{"header": "Accept-Datetime"}}
	}
	tl, err := s.visibleTimeline(r, id)
	if err != nil {
		return err
	}
	v, ok := tl.At(at)
	if !ok {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "%s has no version you may read in the preservation copy.", id)
	}
	h := w.Header()
	h.Set("Vary", "Accept-Datetime")
	s.timeLinks(w, r, id)
	h.Set("Location", s.mementoURL(r, id, v.Num))
	w.WriteHeader(http.StatusFound)
	return nil
}

// mementoURL is the URL of version n of id.
func (s *Handler) mementoURL(r *http.Request, id shelfmark.ID, n int) string {
	return s.resourceIRI(r, id) + "/versions/" + strconv.Itoa(n)
}

// getTimeMap handles GET /api/v1/resources/{id}/versions: the TimeMap as
// JSON, or as application/link-format when Accept prefers it.
func (s *Handler) getTimeMap(w http.ResponseWriter, r *http.Request) error {
	id := shelfmark.ID(r.PathValue("id"))
	tl, err := s.visibleTimeline(r, id)
	if err != nil {
		return err
	}
	original := s.resourceIRI(r, id)
	h := w.Header()
	h.Set("Vary", "Accept")
	h.Add("Link", `<`+original+`>; rel="original timegate"`)
	if prefersLinkFormat(r.Header.Get("Accept")) {
		h.Set("Content-Type", linkFormat)
		_, err := io.WriteString(w, s.linkFormat(r, id, tl))
		return err
	}
	out := TimeMapJSON{Original: original, TimeMap: original + "/versions", TimeGate: original, Truncated: tl.Truncated,
		Mementos: []TimeMapEntryJSON{}}
	for _, v := range tl.Versions {
		out.Mementos = append(out.Mementos, TimeMapEntryJSON{Version: v.Num, Datetime: kit.TimeString(v.Created), Message: v.Message,
			Visibility: string(v.Access.At(s.deps.Now())), Deleted: v.Deleted, URL: s.mementoURL(r, id, v.Num)})
	}
	h.Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(out)
}

// prefersLinkFormat reports whether an Accept header asks for
// application/link-format before (or without) application/json.
func prefersLinkFormat(accept string) bool {
	best, bestQ := "", -1.0
	for _, part := range strings.Split(accept, ",") {
		fields := strings.Split(part, ";")
		mt := strings.ToLower(strings.TrimSpace(fields[0]))
		if mt != linkFormat && mt != "application/json" {
			continue
		}
		q := 1.0
		for _, p := range fields[1:] {
			if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(k, "q") {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					q = f
				}
			}
		}
		if q > bestQ {
			best, bestQ = mt, q
		}
	}
	return best == linkFormat && bestQ > 0
}

// linkFormat writes a TimeMap in application/link-format (RFC 7089
// section 5.1.1): the original resource, the TimeMap itself with the
// range it covers, the TimeGate, then each memento with its datetime, the
// first and last marked.
func (s *Handler) linkFormat(r *http.Request, id shelfmark.ID, tl *preserve.Timeline) string {
	original := s.resourceIRI(r, id)
	var b strings.Builder
	fmt.Fprintf(&b, "<%s>; rel=\"original\",\n<%s/versions>; rel=\"self\"; type=\"%s\"", original, original, linkFormat)
	if n := len(tl.Versions); n > 0 {
		fmt.Fprintf(&b, "; from=\"%s\"; until=\"%s\"", httpDate(tl.Versions[0].Created), httpDate(tl.Versions[n-1].Created))
	}
	fmt.Fprintf(&b, ",\n<%s>; rel=\"timegate\"", original)
	for i, v := range tl.Versions {
		rel := "memento"
		switch {
		case len(tl.Versions) == 1:
			rel = "first last memento"
		case i == 0:
			rel = "first memento"
		case i == len(tl.Versions)-1:
			rel = "last memento"
		}
		fmt.Fprintf(&b, ",\n<%s>; rel=\"%s\"; datetime=\"%s\"", s.mementoURL(r, id, v.Num), rel, httpDate(v.Created))
	}
	b.WriteString("\n")
	return b.String()
}

// httpDate is t as an HTTP date (IMF-fixdate, GMT).
func httpDate(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

// getMemento handles GET /api/v1/resources/{id}/versions/{v}: the
// resource's JSON as the version recorded it (its fields and metadata),
// with Memento-Datetime.
func (s *Handler) getMemento(w http.ResponseWriter, r *http.Request) error {
	id := shelfmark.ID(r.PathValue("id"))
	m, err := s.visibleMemento(r, id)
	if err != nil {
		return err
	}
	out := s.mementoJSON(r, id, m)
	h := w.Header()
	h.Set("Memento-Datetime", httpDate(m.Version.Created))
	h.Set("ETag", `"v`+strconv.Itoa(m.Version.Num)+`"`)
	s.timeLinks(w, r, id)
	return writeResource(w, http.StatusOK, out)
}

// mementoJSON is the resource JSON of a memento: the recorded fields, the
// recorded metadata, and links to the original and the TimeMap. A file
// set's or file's visibility is as hidden as what held it then.
func (s *Handler) mementoJSON(r *http.Request, id shelfmark.ID, m *preserve.Memento) *resourceJSON {
	rec := m.Resource
	original := "/api/v1/resources/" + string(id)
	self := original + "/versions/" + strconv.Itoa(m.Version.Num)
	vis := rec.Visibility
	if rec.Parent != "" && m.Version.Access.Visibility != "" {
		vis = string(m.Version.Access.Visibility)
	}
	out := &resourceJSON{
		ID: id, Kind: shelfmark.Kind(rec.Kind), Visibility: vis, Parent: shelfmark.ID(rec.Parent), Position: int(rec.Position),
		Metadata: rdf.JSONMetadata(m.Metadata), Version: rec.Version, Seq: rec.Seq,
		Created: kit.TimeString(rec.Created), Modified: kit.TimeString(rec.Modified),
		Links:   map[string]string{"self": self, "original": original, "timemap": original + "/versions"},
		Memento: &MementoJSON{Version: m.Version.Num, Datetime: kit.TimeString(m.Version.Created), Message: m.Version.Message},
	}
	for _, c := range rec.MemberOf {
		out.MemberOf = append(out.MemberOf, shelfmark.ID(c))
	}
	if rec.Embargo != nil {
		e := kit.TimeString(*rec.Embargo)
		out.Embargo = &e
	}
	if rec.Lease != nil {
		l := kit.TimeString(*rec.Lease)
		out.Lease = &l
	}
	if rec.Deleted != nil {
		d := kit.TimeString(*rec.Deleted)
		out.Memento.Deleted = &d
	}
	if f := rec.File; f != nil {
		out.File = &FileJSON{Name: f.Name, MediaType: f.MediaType, Size: f.Size, Use: f.Use, ExternalURL: f.ExternalURL, Digests: map[string]string{}}
		if fm := f.Format; fm != nil {
			out.File.Format = &FormatJSON{PRONOM: fm.PRONOM, Name: fm.Name, Version: fm.Version, MediaType: fm.MediaType,
				Width: fm.Width, Height: fm.Height, Pages: fm.Pages, Note: fm.Note}
		}
		for alg, v := range map[string]string{"sha-256": f.SHA256, "sha-512": f.SHA512, "md5": f.MD5} {
			if v != "" {
				out.File.Digests[alg] = v
			}
		}
		if f.Path != "" {
			out.Links["content"] = self + "/content"
		}
	}
	return out
}

// getMementoContent handles GET
// /api/v1/resources/{file}/versions/{v}/content: the file's bytes as of
// version v, from the preservation copy, checked against their digest as
// they are sent (a mismatch cuts the response short rather than end it
// cleanly). Only originals are kept; ranges are not served (the whole
// file is sent, Accept-Ranges: none).
func (s *Handler) getMementoContent(w http.ResponseWriter, r *http.Request) error {
	id := shelfmark.ID(r.PathValue("id"))
	m, err := s.visibleMemento(r, id)
	if err != nil {
		return err
	}
	if m.Resource.Kind != string(shelfmark.KindFile) || m.Resource.File == nil {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is a %s; only files have content.", id, m.Resource.Kind)
	}
	rc, err := m.Open(r.Context())
	if err != nil {
		return err
	}
	defer rc.Close()
	f := m.Resource.File
	h := w.Header()
	h.Set("Content-Type", f.MediaType)
	h.Set("Content-Length", strconv.FormatInt(f.Size, 10))
	h.Set("Content-Disposition", kit.ContentDisposition(f.Name, f.MediaType))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Accept-Ranges", "none")
	h.Set("Memento-Datetime", httpDate(m.Version.Created))
	if f.SHA256 != "" {
		h.Set("ETag", `"`+f.SHA256+`"`)
	}
	s.timeLinks(w, r, id)
	if r.Method == http.MethodHead {
		return nil
	}
	if _, err := io.Copy(w, rc); err != nil {
		s.deps.Logger.Error("version content cut short", "id", id, "version", m.Version.Num, "err", err)
		panic(http.ErrAbortHandler) // the client must not take a short body for the file
	}
	return nil
}

// restoreVersion handles POST /api/v1/resources/{id}/versions/{v}/restore
// (curators and above): it makes the resource equal to version v through
// the ordinary writes, so the change is sequenced, indexed, audited
// ("update", and "order" for a work) and preserved as a new version:
// its metadata, visibility, embargo and lease, and for a work the order
// of its file sets that still exist. It answers what it did not restore.
func (s *Handler) restoreVersion(w http.ResponseWriter, r *http.Request) error {
	id, ifMatch, err := targetIfMatch(r)
	if err != nil {
		return err
	}
	h, pc, err := s.history()
	if err != nil {
		return err
	}
	if err := pc.CheckCurator(r.Context(), id); err != nil {
		return err
	}
	n, err := versionNumber(r.PathValue("v"))
	if err != nil {
		return err
	}
	m, err := h.Memento(r.Context(), id, n)
	if err != nil {
		return err
	}
	res, notRestored, err := preserve.Restore(r.Context(), s.deps.Resources, id, m, ifMatch, s.deps.Now())
	if err != nil {
		return err
	}
	body, err := s.toJSON(r, res).MarshalJSON()
	if err != nil {
		return err
	}
	w.Header().Set("ETag", kit.ETag(res.Version))
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(RestoreJSON{Resource: body, NotRestored: notRestored,
		From: MementoJSON{Version: m.Version.Num, Datetime: kit.TimeString(m.Version.Created), Message: m.Version.Message}})
}
