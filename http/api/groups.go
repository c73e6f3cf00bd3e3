package api

// This file serves bulk ingest over the API: bytes go to POST /api/v1/blobs
// first, then whole items (a work with its file sets, files and order) go to
// POST /api/v1/groups, each stored atomically with its source key, and POST
// /api/v1/sources/lookup tells a client which items were stored before. The
// Client in client.go speaks this protocol for `shelfmark ingest --server`.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// maxRefLength caps the length of a ref in a /groups body.
const maxRefLength = 256

// The bodies of the bulk ingest protocol, which the client speaks too
// (kit holds them).
type (
	blobJSON    = kit.BlobJSON
	lookupBody  = kit.LookupBody
	lookupJSON  = kit.LookupJSON
	groupJSON   = kit.GroupJSON
	groupFile   = kit.GroupFile
	groupResult = kit.GroupResult
)

// groupsBody is the body of POST /api/v1/groups; each group is decoded on
// its own, so that a malformed group fails alone.
type groupsBody struct {
	Groups []json.RawMessage `json:"groups"`
}

// postBlob handles POST /api/v1/blobs: the body is stored, durably, in the
// content store and verified against the client's digests; the answer
// names the bytes by SHA-256, as the files of /api/v1/groups refer to them.
// It takes bytes only from a caller who may deposit somewhere (checked
// before the body is read), within its quotas, and records them as its
// upload: the caller, and only the caller, may then name them in a file.
func (s *Handler) postBlob(w http.ResponseWriter, r *http.Request) error {
	if err := s.deps.Resources.CheckDepositRight(r.Context()); err != nil {
		return err
	}
	blob, _, err := s.putBlob(r)
	if err != nil {
		return err
	}
	return kit.WriteJSON(w, http.StatusCreated, blobJSON{SHA256: blob.Digests[shelfmark.SHA256], Size: blob.Size, Digests: blob.Digests})
}

// lookupSources handles POST /api/v1/sources/lookup: which of the keys
// were stored before, and as which root.
func (s *Handler) lookupSources(w http.ResponseWriter, r *http.Request) error {
	var in lookupBody
	if err := kit.ReadJSON(w, r, s.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	if len(in.Keys) == 0 || len(in.Keys) > shelfmark.MaxPageSize {
		return shelfmark.Errorf(shelfmark.EINVALID, "keys: send 1 to %d source keys.", shelfmark.MaxPageSize)
	}
	if slices.Contains(in.Keys, "") {
		return shelfmark.Errorf(shelfmark.EINVALID, "keys: a source key is a non-empty string (null and \"\" name no item).")
	}
	found, err := s.deps.Resources.FindSources(r.Context(), in.Keys)
	if err != nil {
		return err
	}
	if found == nil {
		found = map[string]shelfmark.ID{}
	}
	return kit.WriteJSON(w, http.StatusOK, lookupJSON{Found: found})
}

// parsedGroup is a group of a /groups body checked in memory, waiting for
// its ids. Indexes name resources of the group; -1 means the field names
// a stored resource by id (kept in the NewResource as it is).
type parsedGroup struct {
	group   *shelfmark.NewGroup
	refs    []string
	parents []int
	members [][]int
	order   []int
}

// postGroups handles POST /api/v1/groups: many groups, each stored whole
// or not at all with its source key, in shared group commits. The server
// mints every id; the client's refs only say which resource is which.
func (s *Handler) postGroups(w http.ResponseWriter, r *http.Request) error {
	var in groupsBody
	if err := kit.ReadJSON(w, r, s.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	if len(in.Groups) == 0 || len(in.Groups) > shelfmark.MaxPageSize {
		return shelfmark.Errorf(shelfmark.EINVALID, "groups: send 1 to %d groups.", shelfmark.MaxPageSize)
	}
	ctx := r.Context()
	results := make([]groupResult, len(in.Groups))
	parsed := make([]*parsedGroup, 0, len(in.Groups))
	idx := make([]int, 0, len(in.Groups))
	n := 0
	for i, raw := range in.Groups {
		pg, err := s.parseGroup(ctx, raw)
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("groups: %w", context.Cause(ctx))
			}
			results[i] = failedGroup(err)
			continue
		}
		parsed = append(parsed, pg)
		idx = append(idx, i)
		n += len(pg.refs)
	}
	if len(parsed) > 0 {
		ids, err := s.deps.Resources.MintIDs(ctx, n)
		if err != nil {
			return fmt.Errorf("groups: mint ids: %w", err)
		}
		gs := make([]*shelfmark.NewGroup, len(parsed))
		for j, pg := range parsed {
			gs[j] = pg.assign(ids[:len(pg.refs)])
			ids = ids[len(pg.refs):]
		}
		_, errs := s.deps.Resources.CreateGroups(ctx, gs)
		for j, i := range idx {
			if errs[j] != nil {
				if shelfmark.ErrorCode(errs[j]) == shelfmark.EINTERNAL {
					s.deps.Logger.Error("storing a group failed", "source_key", gs[j].SourceKey, "err", errs[j])
				}
				results[i] = failedGroup(errs[j])
				continue
			}
			res := groupResult{Status: http.StatusCreated, ID: gs[j].Resources[0].ID, IDs: make(map[string]shelfmark.ID, len(parsed[j].refs))}
			for k, ref := range parsed[j].refs {
				res.IDs[ref] = gs[j].Resources[k].ID
			}
			results[i] = res
		}
	}
	return kit.WriteJSON(w, http.StatusOK, map[string]any{"results": results})
}

// failedGroup is the result of a group that was not stored; a source key
// stored before also names the existing root.
func failedGroup(err error) groupResult {
	eb := kit.ToErrorBody(err)
	status, ok := kit.StatusOf(eb.Code)
	if !ok {
		status = http.StatusInternalServerError
	}
	res := groupResult{Status: status, Error: eb}
	if eb.Code == shelfmark.ECONFLICT {
		if id, ok := eb.Details["id"].(string); ok {
			res.ID = shelfmark.ID(id)
		}
	}
	return res
}

// groupError is an EINVALID error about one resource of a group.
func groupError(i int, ref string, format string, args ...any) error {
	return &shelfmark.Error{Code: shelfmark.EINVALID,
		Message: fmt.Sprintf("resource %d (ref %.60q) of the group: ", i+1, ref) + fmt.Sprintf(format, args...),
		Details: map[string]any{"resource": i + 1, "ref": ref}}
}

// parseGroup decodes and checks one group without touching the database
// or the content store: refs, kinds, metadata, parents, memberships and
// order, and the form of every file's digest and size. Whether the caller
// may name the bytes (and their size) is the engine's to judge, once it
// has judged the group's right to be created, with one answer for bytes
// not stored and bytes not the caller's.
func (s *Handler) parseGroup(ctx context.Context, raw json.RawMessage) (*parsedGroup, error) {
	var g groupJSON
	if err := kit.DecodeJSON(raw, &g); err != nil {
		return nil, err
	}
	if len(g.Resources) == 0 {
		return nil, shelfmark.Errorf(shelfmark.EINVALID, "A group needs at least one resource.")
	}
	if g.SourceKey == "" && (g.FormerSourceKey != "" || g.StoreAnyway) {
		return nil, shelfmark.Errorf(shelfmark.EINVALID, "formerSourceKey and storeAnyway apply to a group with a sourceKey.")
	}
	pg := &parsedGroup{group: &shelfmark.NewGroup{SourceKey: g.SourceKey, FormerKey: g.FormerSourceKey, StoreAnyway: g.StoreAnyway}, refs: make([]string, len(g.Resources)),
		parents: make([]int, len(g.Resources)), members: make([][]int, len(g.Resources))}
	index := make(map[string]int, len(g.Resources)) // refs checked so far
	all := make(map[string]bool, len(g.Resources))
	for _, m := range g.Resources {
		all[m.Ref] = true
	}
	// resolve names a ref of an earlier resource (its index) or a stored
	// resource by id (-1).
	resolve := func(i int, field, name string) (int, error) {
		if j, ok := index[name]; ok {
			return j, nil
		}
		if all[name] {
			return 0, groupError(i, g.Resources[i].Ref, "%s %q is a resource that comes later in the group (or the resource itself); list a resource after those it names.", field, name)
		}
		if err := shelfmark.ID(name).Check(); err != nil {
			return 0, groupError(i, g.Resources[i].Ref, "%s %q is neither a ref of this group nor a resource id.", field, name)
		}
		return -1, nil
	}
	for i, m := range g.Resources {
		switch {
		case m.Ref == "":
			return nil, groupError(i, m.Ref, "ref is missing; every resource needs one, unique in its group.")
		case len(m.Ref) > maxRefLength:
			return nil, groupError(i, m.Ref, "ref is longer than %d bytes.", maxRefLength)
		}
		if _, dup := index[m.Ref]; dup {
			return nil, groupError(i, m.Ref, "ref is named twice in the group.")
		}
		if shelfmark.ID(m.Ref).Valid() {
			return nil, groupError(i, m.Ref, "ref has the form of a resource id; refs are the client's own names, and the server mints the ids.")
		}
		if !m.Kind.Valid() {
			return nil, groupError(i, m.Ref, "kind %q is not one of collection, work, fileset, file.", m.Kind)
		}
		b := resourceBody{Kind: m.Kind, Visibility: m.Visibility, Embargo: m.Embargo, Lease: m.Lease, Metadata: m.Metadata}
		nr, err := b.newResource()
		if err != nil {
			return nil, groupError(i, m.Ref, "%s", shelfmark.ErrorMessage(err))
		}
		pg.parents[i] = -1
		if m.Parent != "" {
			if pg.parents[i], err = resolve(i, "parent", m.Parent); err != nil {
				return nil, err
			}
			nr.Parent = shelfmark.ID(m.Parent)
		}
		for _, c := range m.MemberOf {
			j, err := resolve(i, "memberOf", c)
			if err != nil {
				return nil, err
			}
			pg.members[i] = append(pg.members[i], j)
			nr.MemberOf = append(nr.MemberOf, shelfmark.ID(c))
		}
		switch {
		case m.Kind == shelfmark.KindFile && m.File == nil:
			return nil, groupError(i, m.Ref, "a file needs \"file\": {\"name\", \"mediaType\", \"sha256\", \"size\"} naming bytes sent to /api/v1/blobs.")
		case m.Kind != shelfmark.KindFile && m.File != nil:
			return nil, groupError(i, m.Ref, "only resources of kind file carry \"file\".")
		case m.File != nil:
			if nr.File, err = s.checkGroupFile(m.File); err != nil {
				var se *shelfmark.Error
				if errors.As(err, &se) {
					return nil, &shelfmark.Error{Code: se.Code, Message: fmt.Sprintf("resource %d (ref %.60q) of the group: %s", i+1, m.Ref, se.Message), Details: se.Details}
				}
				return nil, err
			}
		}
		index[m.Ref] = i
		pg.refs[i] = m.Ref
		pg.group.Resources = append(pg.group.Resources, nr)
	}
	seen := make(map[int]bool, len(g.Order))
	for _, ref := range g.Order {
		j, ok := index[ref]
		switch {
		case !ok:
			return nil, shelfmark.Errorf(shelfmark.EINVALID, "order: %q is not a ref of this group.", ref)
		case seen[j]:
			return nil, shelfmark.Errorf(shelfmark.EINVALID, "order: %q is named twice.", ref)
		case pg.parents[j] != 0:
			return nil, shelfmark.Errorf(shelfmark.EINVALID, "order: %q is not a child of the group's first resource.", ref)
		}
		seen[j] = true
		pg.order = append(pg.order, j)
	}
	return pg, nil
}

// checkGroupFile checks the form of a group's file (kit.CheckFile).
func (s *Handler) checkGroupFile(f *groupFile) (*shelfmark.File, error) {
	return kit.CheckFile(f.Name, f.MediaType, f.Use, f.SHA256, f.Size)
}

// assign gives the group's resources the minted ids (one per resource, in
// order) and turns the refs of parents, memberships and order into them.
func (pg *parsedGroup) assign(ids []shelfmark.ID) *shelfmark.NewGroup {
	for i, nr := range pg.group.Resources {
		nr.ID = ids[i]
		if p := pg.parents[i]; p >= 0 {
			nr.Parent = ids[p]
		}
		for k, j := range pg.members[i] {
			if j >= 0 {
				nr.MemberOf[k] = ids[j]
			}
		}
	}
	for _, j := range pg.order {
		pg.group.Order = append(pg.group.Order, ids[j])
	}
	return pg.group
}
