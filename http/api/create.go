package api

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/rdf"
)

// resourceBody is the JSON body that creates or replaces a resource.
type resourceBody struct {
	Kind       shelfmark.Kind  `json:"kind"`
	Visibility string          `json:"visibility"`
	Embargo    json.RawMessage `json:"embargo"`
	Lease      json.RawMessage `json:"lease"`
	Parent     shelfmark.ID    `json:"parent"`
	MemberOf   []shelfmark.ID  `json:"memberOf"`
	Metadata   json.RawMessage `json:"metadata"`
}

func (b *resourceBody) newResource() (*shelfmark.NewResource, error) {
	nr := &shelfmark.NewResource{Kind: b.Kind, Visibility: shelfmark.Visibility(b.Visibility), Parent: b.Parent, MemberOf: b.MemberOf}
	emb, err := kit.OptionalTime("embargo", b.Embargo)
	if err != nil {
		return nil, err
	}
	if emb != nil {
		nr.Embargo = *emb
	}
	lease, err := kit.OptionalTime("lease", b.Lease)
	if err != nil {
		return nil, err
	}
	if lease != nil {
		nr.Lease = *lease
	}
	if len(b.Metadata) > 0 && string(b.Metadata) != "null" {
		if nr.Metadata, err = rdf.ParseJSONMetadata(b.Metadata); err != nil {
			return nil, err
		}
		if len(nr.Metadata) > maxStatements {
			return nil, shelfmark.Errorf(shelfmark.EINVALID, "metadata: at most %d statements.", maxStatements)
		}
	}
	return nr, nil
}

// createOf handles POST /api/v1/{collections,works,filesets}.
func (s *Handler) createOf(kind shelfmark.Kind) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		body, err := kit.ReadBody(w, r, s.opts.MaxBodyBytes)
		if err != nil {
			return err
		}
		var nr *shelfmark.NewResource
		switch mt := kit.MediaTypeOf(r); {
		case mt == "application/json" || (mt == "" && len(bytes.TrimSpace(body)) > 0):
			var b resourceBody
			if err := kit.DecodeJSON(body, &b); err != nil {
				return err
			}
			if b.Kind != "" && b.Kind != kind {
				return shelfmark.Errorf(shelfmark.EINVALID, "kind %q does not match the path, which creates a %s.", b.Kind, kind)
			}
			b.Kind = kind
			if nr, err = b.newResource(); err != nil {
				return err
			}
		case mt == "" || isRDF(mt):
			if nr, err = s.rdfNewResource(r, kind, body, r.Header.Get("Content-Type")); err != nil {
				return err
			}
		default:
			return unsupported(mt)
		}
		res, err := s.deps.Resources.CreateResource(r.Context(), nr)
		if err != nil {
			return err
		}
		w.Header().Set("Location", "/api/v1/resources/"+string(res.ID))
		w.Header().Set("ETag", kit.ETag(res.Version))
		return writeResource(w, http.StatusCreated, s.toJSON(r, res))
	}
}

// rdfNewResource builds a NewResource from an RDF body; the fields that
// are not metadata come from the query string (?parent=, ?memberOf=,
// ?visibility=, ?embargo=).
func (s *Handler) rdfNewResource(r *http.Request, kind shelfmark.Kind, body []byte, contentType string) (*shelfmark.NewResource, error) {
	q := r.URL.Query()
	nr := &shelfmark.NewResource{Kind: kind, Visibility: shelfmark.Visibility(q.Get("visibility")), Parent: shelfmark.ID(q.Get("parent"))}
	for _, m := range q["memberOf"] {
		nr.MemberOf = append(nr.MemberOf, shelfmark.ID(m))
	}
	if e := q.Get("embargo"); e != "" {
		t, err := kit.ParseTime("embargo", e)
		if err != nil {
			return nil, err
		}
		nr.Embargo = &t
	}
	if l := q.Get("lease"); l != "" {
		t, err := kit.ParseTime("lease", l)
		if err != nil {
			return nil, err
		}
		nr.Lease = &t
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nr, nil
	}
	ids, err := s.deps.Resources.MintIDs(r.Context(), 1)
	if err != nil {
		return nil, err
	}
	nr.ID = ids[0]
	nr.Metadata, err = parseRDFMetadata(body, contentType, s.resourceIRI(r, nr.ID))
	return nr, err
}

// batch handles POST /api/v1/batch: many resources in one group commit.
func (s *Handler) batch(w http.ResponseWriter, r *http.Request) error {
	if mt := kit.MediaTypeOf(r); mt != "application/json" && mt != "" {
		return unsupported(mt)
	}
	body, err := kit.ReadBody(w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	var in struct {
		Resources []json.RawMessage `json:"resources"`
	}
	if err := kit.DecodeJSON(body, &in); err != nil {
		return err
	}
	if len(in.Resources) == 0 || len(in.Resources) > shelfmark.MaxPageSize {
		return shelfmark.Errorf(shelfmark.EINVALID, "resources: send 1 to %d resources.", shelfmark.MaxPageSize)
	}
	type result struct {
		Status   int            `json:"status"`
		Resource *resourceJSON  `json:"resource,omitempty"`
		Error    *kit.ErrorBody `json:"error,omitempty"`
	}
	results := make([]result, len(in.Resources))
	nrs := make([]*shelfmark.NewResource, 0, len(in.Resources))
	idx := make([]int, 0, len(in.Resources))
	for i, raw := range in.Resources {
		var b resourceBody
		err := kit.DecodeJSON(raw, &b)
		var nr *shelfmark.NewResource
		if err == nil {
			nr, err = b.newResource()
		}
		if err != nil {
			results[i] = result{Status: http.StatusBadRequest, Error: kit.ToErrorBody(err)}
			continue
		}
		nrs = append(nrs, nr)
		idx = append(idx, i)
	}
	if len(nrs) > 0 {
		out, errs := s.deps.Resources.CreateResources(r.Context(), nrs)
		for j, i := range idx {
			if errs[j] != nil {
				eb := kit.ToErrorBody(errs[j])
				results[i] = result{Status: kit.Status(eb.Code), Error: eb}
			} else {
				results[i] = result{Status: http.StatusCreated, Resource: s.toJSON(r, out[j])}
			}
		}
	}
	return kit.WriteJSON(w, http.StatusOK, map[string]any{"results": results})
}
