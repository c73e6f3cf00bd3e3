package ui

// This file serves a work's History page (GET /works/{id}/history): the
// versions the preservation copy keeps of it, the metadata of two chosen
// versions side by side with what changed between them, and, for
// curators, a form per version that restores it (POST
// /works/{id}/history/{v}/restore). The page shows what the API's versions
// routes show, under the same access rules (preserve.History.Visible): a
// reader sees only the versions whose recorded access lets it read them.

import (
	"net/http"
	"strconv"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/http/labels"
	"github.com/shelfmark/shelfmark/preserve"
)

// uiHistoryRoutes are the routes of this file.
func (s *Handler) uiHistoryRoutes() []kit.Route {
	return []kit.Route{
		{Method: "GET", Pattern: "/works/{id}/history", Handle: s.uiWrap(s.historyPage)},
		{Method: "POST", Pattern: "/works/{id}/history/{v}/restore", Handle: s.uiForm(s.historyRestore)},
	}
}

// historyData is the content of the History page.
type historyData struct {
	ID    string
	Title string
	// Off: the server keeps no preservation copy; None: it keeps no
	// version of this work yet (or none the caller may read).
	Off, None bool
	// Truncated: older versions were not looked at.
	Truncated bool
	// Versions are the versions the caller may read, newest first.
	Versions []historyVersion
	// A and B are the versions compared (0: no comparison), Diff the
	// rows of the comparison.
	A, B *historyVersion
	Diff []historyRow
	// MayRestore shows the restore forms (curators); Version is the
	// work's current version, which a restore must still find.
	MayRestore bool
	Version    int64
}

// historyVersion is one version in the list.
type historyVersion struct {
	Num        int
	Created    time.Time
	Message    string
	Visibility shelfmark.Visibility
	// VisibilityLabel is Visibility in the page's language.
	VisibilityLabel string
	Deleted         bool
	Href            string // the version's JSON (the API's memento)
}

// visibilityKeys are the catalog keys of the visibilities.
var visibilityKeys = map[shelfmark.Visibility]string{
	shelfmark.Public:        "history.vis.public",
	shelfmark.Authenticated: "history.vis.authenticated",
	shelfmark.Private:       "history.vis.private",
}

// historyRow is one row of a comparison: a field's values in A and in B,
// each marked when it is only on that side.
type historyRow struct {
	Label   string
	Changed bool
	A, B    []historyValue
}

// historyValue is one value of a comparison row.
type historyValue struct {
	labels.Value
	// Only: the value is not on the other side (removed in A, added in
	// B).
	Only bool
}

// historyWork reads the work a History route names; ENOTFOUND for what
// is not a work the caller may read.
func (s *Handler) historyWork(r *http.Request) (*shelfmark.Resource, error) {
	id := shelfmark.ID(r.PathValue("id"))
	if err := id.Check(); err != nil {
		return nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "There is no work %.80q.", r.PathValue("id"))
	}
	res, err := s.deps.Resources.FindResource(r.Context(), id)
	if err != nil {
		return nil, err
	}
	if res.Kind != shelfmark.KindWork {
		return nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is a %s, not a work.", id, res.Kind)
	}
	return res, nil
}

// historyPage handles GET /works/{id}/history (?a=&b= name the versions
// compared; by default the two newest).
func (s *Handler) historyPage(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	res, err := s.historyWork(r)
	if err != nil {
		return err
	}
	p := s.page(w, r, "history.title", titleOf(res))
	d := &historyData{ID: string(res.ID), Title: titleOf(res), Version: res.Version}
	p.Data = d
	pc, ok := s.deps.Resources.(shelfmark.PastChecker)
	h := s.opts.History
	if h == nil || !ok {
		d.Off = true
		return s.render(w, r, http.StatusOK, "history", p)
	}
	tl, err := h.Visible(ctx, pc, res.ID)
	switch shelfmark.ErrorCode(err) {
	case "":
	case shelfmark.ENOTFOUND:
		d.None = true // not preserved yet: the resource itself is readable
		return s.render(w, r, http.StatusOK, "history", p)
	default:
		return err
	}
	d.Truncated = tl.Truncated
	now := s.now()
	for i := len(tl.Versions) - 1; i >= 0; i-- {
		v := tl.Versions[i]
		vis := v.Access.At(now)
		d.Versions = append(d.Versions, historyVersion{Num: v.Num, Created: v.Created, Message: v.Message,
			Visibility: vis, VisibilityLabel: p.T(visibilityKeys[vis]), Deleted: v.Deleted,
			Href: "/api/v1/resources/" + string(res.ID) + "/versions/" + strconv.Itoa(v.Num)})
	}
	d.None = len(d.Versions) == 0
	d.MayRestore = pc.CheckCurator(ctx, res.ID) == nil
	if len(d.Versions) >= 2 {
		a, b := d.Versions[1].Num, d.Versions[0].Num
		q := r.URL.Query()
		if n, err := strconv.Atoi(q.Get("a")); err == nil {
			a = n
		}
		if n, err := strconv.Atoi(q.Get("b")); err == nil {
			b = n
		}
		if err := s.historyCompare(r, p, d, a, b); err != nil {
			return err
		}
	}
	return s.render(w, r, http.StatusOK, "history", p)
}

// historyCompare fills in the comparison of versions a and b (each one
// the caller may read: a version named that is not is ENOTFOUND).
func (s *Handler) historyCompare(r *http.Request, p *uiPage, d *historyData, a, b int) error {
	pc := s.deps.Resources.(shelfmark.PastChecker)
	var ms [2]*preserve.Memento
	for i, n := range []int{a, b} {
		m, err := s.opts.History.VisibleMemento(r.Context(), pc, shelfmark.ID(d.ID), n)
		if err != nil {
			return err
		}
		ms[i] = m
		for j := range d.Versions {
			if d.Versions[j].Num == n {
				if i == 0 {
					d.A = &d.Versions[j]
				} else {
					d.B = &d.Versions[j]
				}
			}
		}
	}
	if d.A == nil || d.B == nil {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "Version %d or %d of %s is not listed.", a, b, d.ID)
	}
	d.Diff = diffMetadata(labels.Fields(p.msgs, ms[0].Metadata), labels.Fields(p.msgs, ms[1].Metadata))
	for _, row := range []struct {
		key  string
		a, b string
	}{
		{"history.visibility", d.A.VisibilityLabel, d.B.VisibilityLabel},
		{"history.embargo", dateOf(ms[0].Resource.Embargo), dateOf(ms[1].Resource.Embargo)},
		{"history.lease", dateOf(ms[0].Resource.Lease), dateOf(ms[1].Resource.Lease)},
		{"history.pages", strconv.Itoa(countSets(ms[0])), strconv.Itoa(countSets(ms[1]))},
	} {
		if row.a == "" && row.b == "" {
			continue
		}
		d.Diff = append(d.Diff, historyRow{Label: p.T(row.key), Changed: row.a != row.b,
			A: []historyValue{{Value: labels.Value{Text: row.a}, Only: row.a != row.b}},
			B: []historyValue{{Value: labels.Value{Text: row.b}, Only: row.a != row.b}}})
	}
	return nil
}

// countSets counts the file sets (pages) a version recorded.
func countSets(m *preserve.Memento) int {
	n := 0
	for _, c := range m.Children {
		if c.Kind == string(shelfmark.KindFileSet) {
			n++
		}
	}
	return n
}

// diffMetadata lines up the fields of two versions by label (B's order,
// then the fields only A has), marking the values only one side has.
func diffMetadata(a, b []*labels.Field) []historyRow {
	byLabel := map[string]*labels.Field{}
	for _, f := range a {
		byLabel[f.Label] = f
	}
	var out []historyRow
	seen := map[string]bool{}
	for _, f := range b {
		seen[f.Label] = true
		out = append(out, diffRow(f.Label, byLabel[f.Label], f))
	}
	for _, f := range a {
		if !seen[f.Label] {
			out = append(out, diffRow(f.Label, f, nil))
		}
	}
	return out
}

// diffRow compares one field's values on both sides (nil: absent).
func diffRow(label string, a, b *labels.Field) historyRow {
	key := func(v labels.Value) string { return v.Lang + "\x00" + v.Text }
	in := func(f *labels.Field) map[string]bool {
		m := map[string]bool{}
		if f != nil {
			for _, v := range f.Values {
				m[key(v)] = true
			}
		}
		return m
	}
	inA, inB := in(a), in(b)
	row := historyRow{Label: label}
	if a != nil {
		for _, v := range a.Values {
			only := !inB[key(v)]
			row.Changed = row.Changed || only
			row.A = append(row.A, historyValue{Value: v, Only: only})
		}
	}
	if b != nil {
		for _, v := range b.Values {
			only := !inA[key(v)]
			row.Changed = row.Changed || only
			row.B = append(row.B, historyValue{Value: v, Only: only})
		}
	}
	return row
}

// historyRestore handles POST /works/{id}/history/{v}/restore (curators):
// the work becomes version v again through the ordinary writes
// (preserve.Restore), if it is still at the form's version; the browser
// goes back to the History page with a notice.
func (s *Handler) historyRestore(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	if err := shelfmark.RequireWrite(ctx, "restore versions"); err != nil {
		return err
	}
	res, err := s.historyWork(r)
	if err != nil {
		return err
	}
	pc, ok := s.deps.Resources.(shelfmark.PastChecker)
	if s.opts.History == nil || !ok {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "This server keeps no preservation copy, so it has no versions to restore.")
	}
	if err := pc.CheckCurator(ctx, res.ID); err != nil {
		return err
	}
	version, err := formVersion(r)
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(r.PathValue("v"))
	if err != nil || n < 1 {
		return shelfmark.Errorf(shelfmark.EINVALID, "%.40q is not a version number.", r.PathValue("v"))
	}
	m, err := s.opts.History.Memento(ctx, res.ID, n)
	if err != nil {
		return err
	}
	_, _, err = preserve.Restore(ctx, s.deps.Resources, res.ID, m, version, s.now())
	if shelfmark.ErrorCode(err) == shelfmark.EPRECONDITION {
		return shelfmark.Errorf(shelfmark.ECONFLICT, "The work was changed after this page was made; look at its history again before restoring.")
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/works/"+string(res.ID)+"/history?notice=restored", http.StatusSeeOther)
	return nil
}
