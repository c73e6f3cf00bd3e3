package ui

// This file serves the staff workspace: the list of the works a signed-in
// caller looks after (Repository.Workspace: what they deposited, what one
// of their collections holds, or every work for administrators), newest
// first, narrowed by visibility and by what a work lacks, a page at a
// time (a page costs what the first does at any depth); and the form
// that applies one change to the works chosen on the page, or to every
// work that matches the filters (workspace_runs.go runs it and shows its
// progress).

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// uiWorkspaceRoutes are the routes of the workspace (this file and
// workspace_runs.go).
func (s *Handler) uiWorkspaceRoutes() []kit.Route {
	return []kit.Route{
		{Method: "GET", Pattern: "/workspace", Handle: s.uiWrap(s.workspacePage)},
		{Method: "POST", Pattern: "/workspace/change", Handle: s.uiForm(s.workspaceChange)},
		{Method: "GET", Pattern: "/workspace/runs/{run}", Handle: s.uiWrap(s.workspaceRunPage)},
		{Method: "POST", Pattern: "/workspace/runs/{run}/apply", Handle: s.uiForm(s.workspaceApply)},
		{Method: "GET", Pattern: "/workspace/export.csv", Handle: s.uiWrap(s.workspaceExport)}, // workspace_csv.go
		{Method: "POST", Pattern: "/workspace/export.csv", Handle: s.uiForm(s.workspaceExport)},
		{Method: "POST", Pattern: "/workspace/import", Handle: s.uiWrap(s.workspaceImport)},
	}
}

// workspacePageSize is how many works a workspace page lists.
const workspacePageSize = 50

// workspaceData is the content of /workspace.
type workspaceData struct {
	// Query is the list's filters, as the change form sends them back.
	Query workspaceFilters
	// Ins are the lists offered (mine, every work to administrators, each
	// collection the caller may read); Visibilities and Missing the
	// filters; Changes the changes the form offers; Targets the
	// collections a change may name. The one in force is Selected.
	Ins, Visibilities, Missing, Changes, Targets, Fields []workspaceOption
	Items                                                []workspaceItem
	// Next is the address of the next page ("" on the last), First that
	// of the first ("" on it), Export that of every match as CSV.
	Next, First, Export string
	// Error is why the list could not be read (a bad filter), shown in
	// place of the list; Refused why a change was refused, shown above
	// its form.
	Error, Refused string
	// Today is the earliest date an embargo may end (the form's min).
	Today string
}

// workspaceOption is one choice of a select.
type workspaceOption struct {
	Value, Label string
	Selected     bool
}

// workspaceFilters are the list's filters, as read from the address and
// sent back with a change to every match. In is "" (the caller's own
// works), "all", or a collection's id; From and To are the first and the
// last day of deposit (YYYY-MM-DD, UTC), "" for none.
type workspaceFilters struct {
	In, Visibility, Missing, From, To string
}

// query is the engine's query of f (EINVALID for a day that is none).
func (f workspaceFilters) query() (shelfmark.WorkspaceQuery, error) {
	q := shelfmark.WorkspaceQuery{Visibility: f.Visibility, Missing: f.Missing}
	switch f.In {
	case "":
	case string(shelfmark.WorkspaceAll):
		q.Scope = shelfmark.WorkspaceAll
	default:
		q.Scope, q.Collection = shelfmark.WorkspaceCollection, shelfmark.ID(f.In)
	}
	for _, d := range []struct {
		name, value string
		into        *time.Time
		next        int
	}{{"from", f.From, &q.Since, 0}, {"to", f.To, &q.Before, 1}} {
		if d.value == "" {
			continue
		}
		t, err := time.Parse(time.DateOnly, d.value)
		if err != nil {
			return q, shelfmark.Errorf(shelfmark.EINVALID, "%s: %.20q is not a day (YYYY-MM-DD).", d.name, d.value)
		}
		*d.into = t.AddDate(0, 0, d.next) // "to" is the last day, its end the bound
	}
	return q, nil
}

// values are f as the address's query.
func (f workspaceFilters) values() url.Values {
	v := url.Values{}
	for _, kv := range [][2]string{{"in", f.In}, {"visibility", f.Visibility}, {"missing", f.Missing}, {"from", f.From}, {"to", f.To}} {
		if kv[1] != "" {
			v.Set(kv[0], kv[1])
		}
	}
	return v
}

// readWorkspaceFilters reads the filters of a list's address or of a
// change's form.
func readWorkspaceFilters(v url.Values) workspaceFilters {
	f := workspaceFilters{In: strings.TrimSpace(v.Get("in")), Visibility: strings.TrimSpace(v.Get("visibility")),
		Missing: strings.TrimSpace(v.Get("missing")), From: strings.TrimSpace(v.Get("from")), To: strings.TrimSpace(v.Get("to"))}
	if f.In == string(shelfmark.WorkspaceMine) {
		f.In = ""
	}
	return f
}

// workspaceItem is one work of the list.
type workspaceItem struct {
	ID           string
	Title, Thumb string
	// Visibility is the work's own visibility, labelled; Embargo the date
	// its embargo ends ("" without one).
	Visibility, Embargo string
	Deposited           time.Time
}

// workspaceChanges are the changes the form offers.
var workspaceChanges = []string{"public", "authenticated", "private", "embargo", "lift", "add", "remove", "set", "delete"}

// options labels the workspace's choices in the page's language.
func workspaceOptions(p *uiPage, f workspaceFilters, admin bool, colls []collectionChoice) *workspaceData {
	opt := func(value, label, current string) workspaceOption {
		return workspaceOption{Value: value, Label: label, Selected: value == current}
	}
	d := &workspaceData{Query: f}
	d.Ins = append(d.Ins, opt("", p.T("workspace.in.mine"), f.In))
	if admin {
		d.Ins = append(d.Ins, opt(string(shelfmark.WorkspaceAll), p.T("workspace.in.all"), f.In))
	}
	for _, c := range colls {
		d.Ins = append(d.Ins, opt(string(c.ID), p.T("workspace.in.collection", c.Title), f.In))
		d.Targets = append(d.Targets, opt(string(c.ID), c.Title, ""))
	}
	d.Visibilities = []workspaceOption{opt("", p.T("workspace.vis.any"), f.Visibility),
		opt(string(shelfmark.Public), p.T("workspace.vis.public"), f.Visibility),
		opt(string(shelfmark.Authenticated), p.T("workspace.vis.authenticated"), f.Visibility),
		opt(string(shelfmark.Private), p.T("workspace.vis.private"), f.Visibility),
		opt(shelfmark.WorkspaceEmbargoed, p.T("workspace.vis.embargoed"), f.Visibility)}
	d.Missing = []workspaceOption{opt("", p.T("workspace.missing.any"), f.Missing),
		opt(shelfmark.WorkspaceNoTitle, p.T("workspace.missing.title"), f.Missing),
		opt(shelfmark.WorkspaceNoThumbnail, p.T("workspace.missing.thumbnail"), f.Missing),
		opt(shelfmark.WorkspaceNoOCR, p.T("workspace.missing.ocr"), f.Missing)}
	d.Changes = []workspaceOption{opt("public", p.T("workspace.change.public"), ""),
		opt("authenticated", p.T("workspace.change.authenticated"), ""),
		opt("private", p.T("workspace.change.private"), ""),
		opt("embargo", p.T("workspace.change.embargo"), ""),
		opt("lift", p.T("workspace.change.lift"), ""),
		opt("add", p.T("workspace.change.add"), ""),
		opt("remove", p.T("workspace.change.remove"), ""),
		opt("set", p.T("workspace.change.set"), ""),
		opt("delete", p.T("workspace.change.delete"), "")}
	for _, name := range shelfmark.BatchEditFields {
		label := "work.field." + name // the work page's label of the field
		d.Fields = append(d.Fields, opt(name, p.T(label), ""))
	}
	return d
}

// visibilityLabel labels a work's own visibility.
func visibilityLabel(p *uiPage, v shelfmark.Visibility) string {
	switch v {
	case shelfmark.Public:
		return p.T("workspace.vis.public")
	case shelfmark.Authenticated:
		return p.T("workspace.vis.authenticated")
	}
	return p.T("workspace.vis.private")
}

// workspacePage handles GET /workspace: the caller's works, filtered
// (scope, collection, visibility, missing) and paged (after).
func (s *Handler) workspacePage(w http.ResponseWriter, r *http.Request) error {
	return s.workspaceList(w, r, readWorkspaceFilters(r.URL.Query()), shelfmark.Cursor(r.URL.Query().Get("after")), "")
}

// workspaceList shows the page of the list f after the cursor after;
// refused, when set, is why a change of the form was refused (400).
func (s *Handler) workspaceList(w http.ResponseWriter, r *http.Request, f workspaceFilters, after shelfmark.Cursor, refused string) error {
	ctx := r.Context()
	c := shelfmark.CallerFrom(ctx)
	if !c.Authenticated() {
		return shelfmark.Errorf(shelfmark.EUNAUTHORIZED, "The workspace lists the works of a signed-in caller: sign in.")
	}
	p := s.page(w, r, "workspace.title")
	p.Nav = "workspace"
	var colls []collectionChoice
	if page, err := s.deps.Resources.ListResources(ctx, shelfmark.KindCollection, shelfmark.PageRequest{Limit: depositChoices, Metadata: true}); err == nil {
		for _, col := range page.Items {
			colls = append(colls, collectionChoice{ID: col.ID, Title: titleOf(col)})
		}
	}
	d := workspaceOptions(p, f, c.Admin, colls)
	d.Today, d.Refused = s.now().UTC().Format(time.DateOnly), refused
	d.Export = "/workspace/export.csv"
	if v := f.values(); len(v) > 0 {
		d.Export += "?" + v.Encode()
	}
	q, err := f.query()
	q.After, q.Limit = after, workspacePageSize
	status := http.StatusOK
	if refused != "" {
		status = http.StatusBadRequest
	}
	var page *shelfmark.WorkspacePage
	if err == nil {
		page, err = s.deps.Resources.Workspace(ctx, q)
	}
	switch shelfmark.ErrorCode(err) {
	case "":
		for _, it := range page.Items {
			d.Items = append(d.Items, s.workspaceItem(p, it))
		}
		if page.Next != "" {
			v := f.values()
			v.Set("after", string(page.Next))
			d.Next = "/workspace?" + v.Encode()
		}
		if q.After != "" {
			d.First = "/workspace"
			if v := f.values(); len(v) > 0 {
				d.First += "?" + v.Encode()
			}
		}
	case shelfmark.EINVALID, shelfmark.EFORBIDDEN, shelfmark.ENOTFOUND:
		d.Error, status = shelfmark.ErrorMessage(err), http.StatusBadRequest
		if shelfmark.ErrorCode(err) != shelfmark.EINVALID {
			status = http.StatusForbidden
		}
	default:
		return err
	}
	p.Data = d
	return s.render(w, r, status, "workspace", p)
}

// workspaceItem is it as the list shows it on p.
func (s *Handler) workspaceItem(p *uiPage, it *shelfmark.WorkspaceItem) workspaceItem {
	out := workspaceItem{ID: string(it.ID), Title: readTitle(it.Metadata, p.Lang), Visibility: visibilityLabel(p, it.Visibility), Deposited: it.Created}
	if it.Thumbnail != "" {
		out.Thumb = kit.ContentURL(it.Thumbnail)
	}
	if it.Embargo != nil && it.Embargo.After(s.now()) {
		out.Embargo = it.Embargo.UTC().Format(time.DateOnly)
	}
	return out
}
