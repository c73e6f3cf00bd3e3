package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/rdf"
)

// maxStatements caps the statements of one metadata body: the engine's
// own limit, checked here while parsing so a huge body stops early.
const maxStatements = shelfmark.MaxStatements

// resourceJSON is the JSON representation of a resource.
type resourceJSON struct {
	ID         shelfmark.ID      `json:"id"`
	Kind       shelfmark.Kind    `json:"kind"`
	Visibility string            `json:"visibility"`
	Embargo    *string           `json:"embargo"`
	Lease      *string           `json:"lease"`
	Parent     shelfmark.ID      `json:"parent,omitempty"`
	Position   int               `json:"position,omitempty"`
	MemberOf   []shelfmark.ID    `json:"memberOf,omitempty"`
	Metadata   json.RawMessage   `json:"-"` // spliced in by MarshalJSON
	File       *FileJSON         `json:"file,omitempty"`
	Version    int64             `json:"version"`
	Seq        int64             `json:"seq"`
	Created    string            `json:"created"`
	Modified   string            `json:"modified"`
	Links      map[string]string `json:"links"`
	// Memento is set on a past state (versions.go).
	Memento *MementoJSON `json:"memento,omitempty"`
}

// resourceFields has the fields of resourceJSON without the metadata.
type resourceFields resourceJSON

// MarshalJSON encodes the resource and splices in its metadata, which
// rdf.JSONMetadata already encoded: encoding/json would otherwise parse and
// compact those bytes again on every response.
func (r *resourceJSON) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal((*resourceFields)(r))
	if err != nil {
		return nil, err
	}
	meta := r.Metadata
	if len(meta) == 0 {
		meta = json.RawMessage("{}")
	}
	out := make([]byte, 0, len(b)+len(meta)+16)
	out = append(out, b[:len(b)-1]...)
	out = append(out, `,"metadata":`...)
	out = append(out, meta...)
	return append(out, '}'), nil
}

// writeResource writes a resource as the JSON response body.
func writeResource(w http.ResponseWriter, status int, r *resourceJSON) error {
	b, err := r.MarshalJSON()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err = w.Write(append(b, '\n'))
	return err
}

// FileJSON is the file description in a file's JSON (GET
// /api/v1/resources/{id}).
type FileJSON struct {
	Name        string            `json:"name"`
	MediaType   string            `json:"mediaType"`
	Size        int64             `json:"size"`
	Digests     map[string]string `json:"digests,omitempty"`
	Use         string            `json:"use"`
	ExternalURL string            `json:"externalUrl,omitempty"`
	// Format is what characterization found (absent until it ran).
	Format *FormatJSON `json:"format,omitempty"`
}

// FormatJSON is a file's identified format.
type FormatJSON struct {
	PRONOM    string `json:"pronom"`
	Name      string `json:"name,omitempty"`
	Version   string `json:"version,omitempty"`
	MediaType string `json:"mediaType,omitempty"`
	Width     int    `json:"width,omitempty"`
	Height    int    `json:"height,omitempty"`
	Pages     int    `json:"pages,omitempty"`
	Note      string `json:"note,omitempty"`
}

func (s *Handler) toJSON(r *http.Request, res *shelfmark.Resource) *resourceJSON {
	self := "/api/v1/resources/" + string(res.ID)
	out := &resourceJSON{
		ID: res.ID, Kind: res.Kind, Visibility: string(res.Visibility), Parent: res.Parent, Position: res.Position,
		MemberOf: res.MemberOf, Metadata: rdf.JSONMetadata(res.Metadata), Version: res.Version, Seq: res.Seq,
		Created: kit.TimeString(res.Created), Modified: kit.TimeString(res.Modified),
		Links: map[string]string{"self": self},
	}
	if res.Embargo != nil {
		e := kit.TimeString(*res.Embargo)
		out.Embargo = &e
	}
	if res.Lease != nil {
		l := kit.TimeString(*res.Lease)
		out.Lease = &l
	}
	switch res.Kind {
	case shelfmark.KindCollection:
		out.Links["members"] = self + "/members"
	case shelfmark.KindWork:
		out.Links["children"] = self + "/children"
		out.Links["order"] = self + "/order"
	case shelfmark.KindFileSet:
		out.Links["files"] = self + "/children"
		out.Links["upload"] = self + "/files"
	case shelfmark.KindFile:
		out.Links["content"] = self + "/content"
	}
	if res.Parent != "" {
		out.Links["parent"] = "/api/v1/resources/" + string(res.Parent)
	}
	if f := res.File; f != nil {
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
	}
	return out
}

// getResource handles GET (and HEAD) /api/v1/resources/{id}.
func (s *Handler) getResource(w http.ResponseWriter, r *http.Request) error {
	if ad := r.Header.Get("Accept-Datetime"); ad != "" && s.opts.History != nil {
		return s.timegate(w, r, ad) // versions.go
	}
	mt, ok := negotiate(r)
	if !ok {
		return notAcceptable(r)
	}
	res, err := s.deps.Resources.FindResource(r.Context(), shelfmark.ID(r.PathValue("id")))
	if err != nil {
		return err
	}
	tag := kit.ETag(res.Version)
	h := w.Header()
	h.Set("ETag", tag)
	h.Set("Vary", "Accept")
	if s.opts.History != nil {
		h.Set("Vary", "Accept, Accept-Datetime")
		s.timeLinks(w, r, res.ID)
	}
	h.Set("Last-Modified", res.Modified.UTC().Format(http.TimeFormat))
	h.Add("Link", `<http://pcdm.org/models#`+pcdmClass(res.Kind)+`>; rel="type"`)
	if match := r.Header.Get("If-None-Match"); match != "" && (match == tag || match == "*") {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	if mt == "application/json" {
		return writeResource(w, http.StatusOK, s.toJSON(r, res))
	}
	var buf bytes.Buffer
	if err := rdf.Write(&buf, mt, s.resourceIRI(r, res.ID), res.Metadata); err != nil {
		return err
	}
	h.Set("Content-Type", mt+contentCharset(mt))
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	_, err = w.Write(buf.Bytes())
	return err
}

// putResource replaces a resource's metadata (and, from JSON, its access
// fields; absent fields stay as they are).
func (s *Handler) putResource(w http.ResponseWriter, r *http.Request) error {
	id, ifMatch, err := targetIfMatch(r)
	if err != nil {
		return err
	}
	body, err := kit.ReadBody(w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	u := shelfmark.ResourceUpdate{IfMatch: ifMatch}
	switch mt := kit.MediaTypeOf(r); {
	case mt == "application/json":
		var b struct {
			Visibility *shelfmark.Visibility `json:"visibility"`
			Embargo    json.RawMessage       `json:"embargo"`
			Lease      json.RawMessage       `json:"lease"`
			Metadata   json.RawMessage       `json:"metadata"`
		}
		if err := kit.DecodeJSON(body, &b); err != nil {
			return err
		}
		if b.Metadata == nil {
			return shelfmark.Errorf(shelfmark.EINVALID, "metadata: PUT replaces the metadata, so the body needs it ({} for none); use PATCH to change single fields.")
		}
		meta, err := rdf.ParseJSONMetadata(b.Metadata)
		if err != nil {
			return err
		}
		u.Replace, u.Visibility = &meta, b.Visibility
		if u.Embargo, err = kit.OptionalTime("embargo", b.Embargo); err != nil {
			return err
		}
		if u.Lease, err = kit.OptionalTime("lease", b.Lease); err != nil {
			return err
		}
	case isRDF(mt):
		// The whole Content-Type, so that rdf.Parse refuses a charset
		// other than UTF-8 (415) rather than misreading the bytes.
		meta, err := parseRDFMetadata(body, r.Header.Get("Content-Type"), s.resourceIRI(r, id))
		if err != nil {
			return err
		}
		u.Replace = &meta
	default:
		return unsupported(mt)
	}
	return s.update(w, r, id, u)
}

// patchResource adds and removes statements and changes access fields.
func (s *Handler) patchResource(w http.ResponseWriter, r *http.Request) error {
	id, ifMatch, err := targetIfMatch(r)
	if err != nil {
		return err
	}
	if mt := kit.MediaTypeOf(r); mt != "application/json" && mt != "application/merge-patch+json" {
		return &shelfmark.Error{Code: shelfmark.EUNSUPPORTED,
			Message: fmt.Sprintf("PATCH takes application/json ({\"add\": {…}, \"remove\": {…}}), not %q.", mt)}
	}
	body, err := kit.ReadBody(w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	var b struct {
		Add        json.RawMessage       `json:"add"`
		Remove     json.RawMessage       `json:"remove"`
		Visibility *shelfmark.Visibility `json:"visibility"`
		Embargo    json.RawMessage       `json:"embargo"`
		Lease      json.RawMessage       `json:"lease"`
	}
	if err := kit.DecodeJSON(body, &b); err != nil {
		return err
	}
	u := shelfmark.ResourceUpdate{IfMatch: ifMatch, Visibility: b.Visibility}
	if b.Add != nil {
		if u.Add, err = rdf.ParseJSONMetadata(b.Add); err != nil {
			return err
		}
	}
	if b.Remove != nil {
		if u.Remove, err = rdf.ParseJSONMetadata(b.Remove); err != nil {
			return err
		}
	}
	if u.Embargo, err = kit.OptionalTime("embargo", b.Embargo); err != nil {
		return err
	}
	if u.Lease, err = kit.OptionalTime("lease", b.Lease); err != nil {
		return err
	}
	return s.update(w, r, id, u)
}

func (s *Handler) update(w http.ResponseWriter, r *http.Request, id shelfmark.ID, u shelfmark.ResourceUpdate) error {
	res, err := s.deps.Resources.UpdateResource(r.Context(), id, u)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", kit.ETag(res.Version))
	return writeResource(w, http.StatusOK, s.toJSON(r, res))
}

// deleteResource leaves a tombstone.
func (s *Handler) deleteResource(w http.ResponseWriter, r *http.Request) error {
	ifMatch, err := kit.ParseIfMatch(r)
	if err != nil {
		return err
	}
	if err := s.deps.Resources.DeleteResource(r.Context(), shelfmark.ID(r.PathValue("id")), ifMatch); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// resourceIRI is the IRI (and URL) of a resource.
func (s *Handler) resourceIRI(r *http.Request, id shelfmark.ID) string {
	return s.deps.Base(r) + "/api/v1/resources/" + string(id)
}

// targetIfMatch reads the resource a write names ({id}) and the version
// its If-Match header requires (none when absent).
func targetIfMatch(r *http.Request) (shelfmark.ID, int64, error) {
	id := shelfmark.ID(r.PathValue("id"))
	if err := id.Check(); err != nil {
		return "", 0, err
	}
	ifMatch, err := kit.ParseIfMatch(r)
	return id, ifMatch, err
}
