package ui

// This file serves the interface's deposit form: repeatable metadata
// fields, a collection, a visibility and files. With script, each file
// goes to POST /api/v1/blobs as soon as it is chosen (with its own
// progress bar) and the form then names the stored bytes; without
// script, the files come in the form itself (multipart), streamed to the
// content store under the upload limit. Either way the work, a file set
// per file and the file in it, and the file sets' order are stored in one
// group (CreateGroups), all or nothing, as POST /api/v1/groups stores
// them. The edit, reorder, access, roles and delete forms are in
// ui_edit*.go.

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// uiDepositRoutes are the routes of this file and of ui_edit*.go.
func (s *Handler) uiDepositRoutes() []kit.Route {
	return []kit.Route{
		{Method: "GET", Pattern: "/deposit", Handle: s.uiWrap(s.depositPage)},
		{Method: "POST", Pattern: "/deposit", Handle: s.uiWrap(s.depositPost)},
		{Method: "GET", Pattern: "/works/{id}/edit", Handle: s.uiWrap(s.editPage)},
		{Method: "POST", Pattern: "/works/{id}/edit", Handle: s.uiForm(s.editPost)},
		{Method: "GET", Pattern: "/works/{id}/pages", Handle: s.uiWrap(s.pagesPage)},
		{Method: "POST", Pattern: "/works/{id}/order", Handle: s.uiForm(s.orderPost)},
		{Method: "POST", Pattern: "/works/{id}/files", Handle: s.uiWrap(s.filesPost)}, // edit_files.go
		{Method: "POST", Pattern: "/works/{id}/labels", Handle: s.uiForm(s.labelsPost)},
		{Method: "POST", Pattern: "/works/{id}/pages/{page}/file", Handle: s.uiWrap(s.replacePost)}, // edit_replace.go
		{Method: "POST", Pattern: "/works/{id}/thumbnail", Handle: s.uiForm(s.thumbnailPost)},       // edit_thumbnail.go
		{Method: "GET", Pattern: "/works/{id}/access", Handle: s.uiWrap(s.accessPage)},
		{Method: "POST", Pattern: "/works/{id}/access", Handle: s.uiForm(s.accessPost)},
		{Method: "GET", Pattern: "/works/{id}/delete", Handle: s.uiWrap(s.deletePage)},
		{Method: "POST", Pattern: "/works/{id}/delete", Handle: s.uiForm(s.deletePost)},
		{Method: "GET", Pattern: "/collections/new", Handle: s.uiWrap(s.newCollectionPage)},
		{Method: "POST", Pattern: "/collections/new", Handle: s.uiForm(s.newCollectionPost)},
		{Method: "GET", Pattern: "/collections/{id}/edit", Handle: s.uiWrap(s.collectionEditPage)},
		{Method: "POST", Pattern: "/collections/{id}/edit", Handle: s.uiForm(s.collectionEditPost)},
		{Method: "POST", Pattern: "/collections/{id}/files-default", Handle: s.uiForm(s.filesDefaultPost)}, // access_files.go
		{Method: "GET", Pattern: "/collections/{id}/roles", Handle: s.uiWrap(s.rolesPage)},
		{Method: "POST", Pattern: "/collections/{id}/roles", Handle: s.uiForm(s.rolesPost)},
	}
}

// maxFormRows bounds the metadata rows of one form (a work with more
// statements is edited through the API).
const maxFormRows = 5000

// maxDepositFiles bounds the files of one deposit.
const maxDepositFiles = 1000

// formFields are the metadata fields the forms offer (Dublin Core's
// elements, and DCMI's licence), in the order they are listed, with the
// catalog keys of their names.
var formFields = func() []struct{ iri, key string } {
	out := []struct{ iri, key string }{}
	for _, name := range []string{"title", "creator", "contributor", "date", "description", "subject", "language", "publisher",
		"type", "format", "identifier", "source", "relation", "coverage", "rights"} {
		out = append(out, struct{ iri, key string }{shelfmark.NSDC + name, "deposit.field." + name})
	}
	return append(out, struct{ iri, key string }{shelfmark.NSDCTerms + "license", "catalog.field.license"})
}()

// fieldOption is one choice of a row's field; Vocab is the vocabulary
// its values are picked from ("" for free values).
type fieldOption struct {
	IRI   string
	Label string
	Vocab vocabulary
}

// metaRow is one metadata row of a form: a predicate, a value and how the
// value is stored ("" plain text, "iri", "lang:TAG", "type:DATATYPE"), so
// that editing keeps a value's language or type.
type metaRow struct {
	Field, Value, Kind string
	// Known is set when the field is one of the options.
	Known bool
	// Required marks the first title row.
	Required bool
	// Vocab is the vocabulary the field's values are picked from ("" for
	// free values); ValueName names the value in the page's language
	// when it is a term or a language ("" otherwise).
	Vocab     vocabulary
	ValueName string
	// Invalid marks the row a form was refused for.
	Invalid bool
}

// metaForm is the metadata part of the deposit, edit and conflict forms.
type metaForm struct {
	Page    *uiPage
	Rows    []metaRow
	Options []fieldOption
	// Pickers are the lists of the picked fields' values, in the page's
	// language.
	Pickers []*picker
}

// newMetaForm returns the form of rows, with the field choices and the
// pickers in the page's language; the first title row is marked
// required.
func newMetaForm(p *uiPage, rows []metaRow) *metaForm {
	f := &metaForm{Page: p, Rows: rows, Options: make([]fieldOption, len(formFields)), Pickers: p.pickers.List}
	known := map[string]bool{}
	for i, ff := range formFields {
		f.Options[i] = fieldOption{IRI: ff.iri, Label: p.T(ff.key), Vocab: vocabOf(ff.iri)}
		known[ff.iri] = true
	}
	req := false
	for i := range f.Rows {
		r := &f.Rows[i]
		r.Known, r.Vocab = known[r.Field], vocabOf(r.Field)
		if r.Vocab != "" {
			r.ValueName = p.pickers.label(r.Vocab, strings.TrimSpace(r.Value))
		}
		if !req && r.Field == shelfmark.NSDC+"title" {
			r.Required, req = true, true
		}
	}
	return f
}

// defaultRows are the rows of an empty deposit form.
func defaultRows() []metaRow {
	return []metaRow{{Field: shelfmark.NSDC + "title"}, {Field: shelfmark.NSDC + "creator"}, {Field: shelfmark.NSDC + "date"},
		{Field: shelfmark.NSDC + "description"}, {Field: shelfmark.NSDC + "subject"}}
}

// rowsOf turns statements into form rows, the titles first (the others
// in their order).
func rowsOf(stmts []shelfmark.Statement) []metaRow {
	rows := make([]metaRow, 0, len(stmts)+1)
	titles := make([]shelfmark.Statement, 0, 1)
	others := make([]shelfmark.Statement, 0, len(stmts))
	for _, st := range stmts {
		if st.Predicate == shelfmark.NSDC+"title" {
			titles = append(titles, st)
		} else {
			others = append(others, st)
		}
	}
	for _, st := range append(titles, others...) {
		r := metaRow{Field: st.Predicate, Value: st.Object.Value}
		switch {
		case st.Object.Kind == shelfmark.IRI:
			r.Kind = "iri"
		case st.Object.Lang != "":
			r.Kind = "lang:" + st.Object.Lang
		case st.Object.Datatype != "" && st.Object.Datatype != shelfmark.XSDString:
			r.Kind = "type:" + st.Object.Datatype
		}
		rows = append(rows, r)
	}
	return rows
}

// formRows reads the rows a form posted: parallel lists field, value and
// kind, one entry per row.
func formRows(form url.Values) ([]metaRow, error) {
	fields, values, kinds := form["field"], form["value"], form["kind"]
	if len(fields) != len(values) || len(kinds) != len(values) {
		return nil, shelfmark.Errorf(shelfmark.EINVALID, "The form's metadata rows are incomplete (%d fields, %d values, %d kinds).", len(fields), len(values), len(kinds))
	}
	if len(fields) > maxFormRows {
		return nil, shelfmark.Errorf(shelfmark.EINVALID, "The form has %d metadata rows; at most %d are taken.", len(fields), maxFormRows)
	}
	rows := make([]metaRow, len(fields))
	for i := range fields {
		rows[i] = metaRow{Field: strings.TrimSpace(fields[i]), Value: values[i], Kind: kinds[i]}
	}
	return rows, nil
}

// statementsOf turns rows into statements: rows without a value are left
// out (that is how a row is removed), values are trimmed, and a title is
// required.
func statementsOf(rows []metaRow) ([]shelfmark.Statement, error) {
	out := make([]shelfmark.Statement, 0, len(rows))
	title := false
	for i, r := range rows {
		v := strings.TrimSpace(r.Value)
		if v == "" {
			continue
		}
		if r.Field == "" || !strings.Contains(r.Field, ":") || strings.ContainsAny(r.Field, " <>\"{}|\\^`") {
			return nil, shelfmark.Errorf(shelfmark.EINVALID, "Row %d: %.80q is not a field.", i+1, r.Field)
		}
		t, err := termOf(r, v)
		if err != nil {
			return nil, shelfmark.Errorf(shelfmark.EINVALID, "Row %d: %s", i+1, shelfmark.ErrorMessage(err))
		}
		if r.Field == shelfmark.NSDC+"title" {
			title = true
		}
		out = append(out, shelfmark.Statement{Predicate: r.Field, Object: t})
	}
	if !title {
		return nil, errNoTitle
	}
	return out, nil
}

// termOf is the term of a row's value v (trimmed), as its kind says.
func termOf(r metaRow, v string) (shelfmark.Term, error) {
	t := shelfmark.NewLiteral(v)
	switch k := r.Kind; {
	case k == "":
	case k == "iri":
		t = shelfmark.NewIRI(v)
	case strings.HasPrefix(k, "lang:") && len(k) > len("lang:"):
		t = shelfmark.NewLangLiteral(v, strings.TrimPrefix(k, "lang:"))
	case strings.HasPrefix(k, "type:") && len(k) > len("type:"):
		t.Datatype = strings.TrimPrefix(k, "type:")
	default:
		return t, shelfmark.Errorf(shelfmark.EINVALID, "%.40q is not a kind of value.", k)
	}
	return t, nil
}

// errNoTitle is the error of a form without a title.
var errNoTitle = shelfmark.Errorf(shelfmark.EINVALID, "A title is required.")

// depositFile is a file of the deposit form: bytes already in the
// content store.
type depositFile struct {
	Name, MediaType, SHA256 string
	Size                    int64
}

// file is the description of a stored file as a page's original.
func (f depositFile) file() *shelfmark.File {
	return &shelfmark.File{Name: f.Name, MediaType: f.MediaType, Size: f.Size, SHA256: f.SHA256, Use: shelfmark.UseOriginal}
}

// depositData is the content of the deposit page.
type depositData struct {
	Meta       *metaForm
	Collection string
	// CollectionTitle names the collection when it was given and is
	// readable.
	CollectionTitle string
	// Choices are collections to suggest (the top-level ones the caller
	// may see, newest first, at most depositChoices): the engine decides
	// whether the caller may deposit into the one chosen.
	Choices      []collectionChoice
	Visibility   string
	Visibilities []string
	// FilesVisibility and FilesEmbargo are who may read the files (their
	// pages' own access, access_files.go): as the record by default.
	FilesVisibility, FilesEmbargo string
	Files                         []depositFile
	MaxUpload                     int64
	Error                         string
}

// visibilities are the choices of a visibility.
var visibilities = []string{string(shelfmark.Public), string(shelfmark.Authenticated), string(shelfmark.Private)}

// depositPage handles GET /deposit (?collection= preselects a
// collection).
func (s *Handler) depositPage(w http.ResponseWriter, r *http.Request) error {
	if err := shelfmark.RequireWrite(r.Context(), "deposit"); err != nil {
		return err
	}
	p := s.page(w, r, "deposit.title")
	p.Nav = "deposit"
	d := &depositData{Meta: newMetaForm(p, defaultRows()), Collection: strings.TrimSpace(r.URL.Query().Get("collection")),
		Visibility: string(shelfmark.Public), Visibilities: visibilities, FilesVisibility: string(shelfmark.Public), MaxUpload: s.opts.MaxUploadBytes}
	s.collectionTitle(r, d)
	if d.CollectionTitle != "" {
		// the collection's default for the files of works deposited there
		if v, err := s.deps.Resources.CollectionFilesDefault(r.Context(), shelfmark.ID(d.Collection)); err == nil {
			d.FilesVisibility = string(v)
		}
	}
	p.Data = d
	return s.render(w, r, http.StatusOK, "deposit", p)
}

// collectionChoice is a collection the deposit form suggests.
type collectionChoice struct {
	ID    shelfmark.ID
	Title string
}

// depositChoices is how many collections the deposit form suggests.
const depositChoices = 50

// collectionTitle names the chosen collection, when the caller may see
// it (the deposit itself is judged by the engine), and lists the
// collections to suggest.
func (s *Handler) collectionTitle(r *http.Request, d *depositData) {
	if page, err := s.deps.Resources.ListResources(r.Context(), shelfmark.KindCollection, shelfmark.PageRequest{Limit: depositChoices, Metadata: true}); err == nil {
		for _, c := range page.Items {
			d.Choices = append(d.Choices, collectionChoice{ID: c.ID, Title: titleOf(c)})
		}
	}
	if d.Collection == "" || shelfmark.ID(d.Collection).Check() != nil {
		return
	}
	if c, err := s.deps.Resources.FindResource(r.Context(), shelfmark.ID(d.Collection)); err == nil && c.Kind == shelfmark.KindCollection {
		d.CollectionTitle = titleOf(c)
	}
}

// titleOf is a resource's first title, or its id.
func titleOf(res *shelfmark.Resource) string {
	for _, st := range res.Metadata {
		if (st.Predicate == shelfmark.NSDC+"title" || st.Predicate == shelfmark.NSDCTerms+"title") && st.Object.Value != "" {
			return st.Object.Value
		}
	}
	return string(res.ID)
}

// depositPost handles POST /deposit: a form naming stored bytes
// (urlencoded, from the script), or a multipart form carrying the files.
// "add" shows the form again with one more metadata row. The files a
// multipart form carried stay the caller's uploads while the form is shown
// again to mend a mistake (it names them, so they are not sent twice);
// when the deposit is refused (403, or any error without the form) the
// files it carried or named are removed at once.
func (s *Handler) depositPost(w http.ResponseWriter, r *http.Request) (err error) {
	if err := shelfmark.RequireWrite(r.Context(), "deposit"); err != nil {
		return err
	}
	var (
		form    url.Values
		files   []depositFile
		fileErr error // a file the form names that is not stored as it says
		sent    sentFiles
		shown   bool // the form was shown again, naming the files
	)
	defer func() {
		if err != nil && !shown {
			sent.drop(r.Context(), s)
		}
	}()
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "multipart/form-data" {
		// files come only from a caller who may deposit somewhere
		if err := s.deps.Resources.CheckDepositRight(r.Context()); err != nil {
			return err
		}
		// a form carrying files takes an upload slot, as the API's uploads do
		release, err := s.opts.Uploads.Admit(r.Context())
		if err != nil {
			kit.RetryAfter(w, err)
			return err
		}
		defer release()
		if form, files, err = s.readDepositMultipart(w, r, &sent); err != nil {
			return err
		}
		// files kept from a form shown again, then those it carried
		var kept []depositFile
		kept, fileErr = s.namedFiles(r, form)
		files = append(kept, files...)
	} else {
		if err := s.readForm(w, r); err != nil {
			return err
		}
		form = r.PostForm
		files, fileErr = s.namedFiles(r, form)
	}
	rows, err := formRows(form)
	if err != nil {
		return err
	}
	p := s.page(w, r, "deposit.title")
	p.Nav = "deposit"
	d := &depositData{Collection: strings.TrimSpace(form.Get("collection")), Visibility: form.Get("visibility"),
		Visibilities: visibilities, Files: files, MaxUpload: s.opts.MaxUploadBytes,
		FilesVisibility: cmp.Or(form.Get("files_access"), string(shelfmark.Public)), FilesEmbargo: strings.TrimSpace(form.Get("files_embargo"))}
	if d.Visibility == "" {
		d.Visibility = string(shelfmark.Public) // as the API's default
	}
	s.collectionTitle(r, d)
	p.Data = d
	again := func(status int, msg string) error {
		d.Meta, d.Error, shown = newMetaForm(p, rows), msg, true
		return s.render(w, r, status, "deposit", p)
	}
	if fileErr != nil {
		status, ok := kit.StatusOf(shelfmark.ErrorCode(fileErr))
		if !ok || status >= 500 {
			return fileErr
		}
		return again(status, shelfmark.ErrorMessage(fileErr))
	}
	stmts, answered, err := metaStep(p, form, &rows, nil, again)
	if answered {
		return err
	}
	work, err := s.storeDeposit(r, d, stmts)
	if err != nil {
		switch shelfmark.ErrorCode(err) {
		case shelfmark.EFORBIDDEN:
			// refused: the files it carried or named go at once, and the
			// form is shown again without them
			sent.shas = append(sent.shas, shasOf(d.Files)...)
			sent.last = s.now()
			sent.drop(r.Context(), s)
			d.Files = nil
			return again(http.StatusForbidden, shelfmark.ErrorMessage(err))
		case shelfmark.EINVALID, shelfmark.EDIGESTMISMATCH:
			// a mistake the form can mend (a file named with the wrong
			// size, or bytes the caller may not name, are judged by the
			// engine with the deposit): the files stay the caller's
			// uploads, named by the form shown again
			return again(kit.Status(shelfmark.ErrorCode(err)), shelfmark.ErrorMessage(err))
		}
		return err
	}
	http.Redirect(w, r, "/works/"+string(work)+"?notice=deposited", http.StatusSeeOther)
	return nil
}

// nextField is the field of a row added to rows: creator after a title,
// else the field of the last row.
func nextField(rows []metaRow) string {
	if len(rows) < 2 {
		return shelfmark.NSDC + "creator"
	}
	return rows[len(rows)-2].Field
}

// storeDeposit stores the work with a file set and file per file, in
// order, as one group, and returns the work's id.
func (s *Handler) storeDeposit(r *http.Request, d *depositData, stmts []shelfmark.Statement) (shelfmark.ID, error) {
	ctx := r.Context()
	vis := shelfmark.Visibility(d.Visibility)
	if !vis.Valid() {
		return "", shelfmark.Errorf(shelfmark.EINVALID, "visibility: %.40q is not one of public, authenticated, private.", d.Visibility)
	}
	files, err := depositFilesAccess(d)
	if err != nil {
		return "", err
	}
	ids, err := s.deps.Resources.MintIDs(ctx, 1+2*len(d.Files))
	if err != nil {
		return "", err
	}
	work := &shelfmark.NewResource{ID: ids[0], Kind: shelfmark.KindWork, Visibility: vis, Metadata: stmts}
	if d.Collection != "" {
		c := shelfmark.ID(d.Collection)
		if err := c.Check(); err != nil {
			return "", shelfmark.Errorf(shelfmark.EINVALID, "collection: %.80q is not a collection id.", d.Collection)
		}
		work.MemberOf = []shelfmark.ID{c}
	}
	g := &shelfmark.NewGroup{Resources: []*shelfmark.NewResource{work}}
	for i, f := range d.Files {
		fs, file := ids[1+2*i], ids[2+2*i]
		g.Resources = append(g.Resources,
			&shelfmark.NewResource{ID: fs, Kind: shelfmark.KindFileSet, Parent: work.ID, Visibility: files.Visibility, Embargo: files.Embargo,
				Metadata: []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral(f.Name)}}},
			&shelfmark.NewResource{ID: file, Kind: shelfmark.KindFile, Parent: fs, File: f.file()})
		g.Order = append(g.Order, fs)
	}
	_, errs := s.deps.Resources.CreateGroups(ctx, []*shelfmark.NewGroup{g})
	if errs[0] != nil {
		return "", errs[0]
	}
	return work.ID, nil
}

// namedFiles reads the files a script-enhanced form names: bytes it sent
// to POST /api/v1/blobs, in the lists file_sha256, file_name, file_size
// and file_type. Each must be in the content store with the size stated.
func (s *Handler) namedFiles(r *http.Request, form url.Values) ([]depositFile, error) {
	shas, names, sizes, types := form["file_sha256"], form["file_name"], form["file_size"], form["file_type"]
	if len(shas) != len(names) || len(shas) != len(sizes) || len(shas) != len(types) {
		return nil, shelfmark.Errorf(shelfmark.EINVALID, "The form's files are incomplete.")
	}
	if len(shas) > maxDepositFiles {
		return nil, shelfmark.Errorf(shelfmark.EINVALID, "At most %d files are taken in one deposit.", maxDepositFiles)
	}
	out := make([]depositFile, len(shas))
	for i := range shas {
		size, err := strconv.ParseInt(sizes[i], 10, 64)
		if err != nil {
			return nil, shelfmark.Errorf(shelfmark.EINVALID, "file %d: %.40q is not a size.", i+1, sizes[i])
		}
		f, err := kit.CheckFile(names[i], types[i], "", shas[i], &size)
		if err != nil {
			return nil, err
		}
		out[i] = depositFile{Name: f.Name, MediaType: f.MediaType, SHA256: f.SHA256, Size: f.Size}
	}
	return out, nil
}

// shasOf lists the digests of files.
func shasOf(files []depositFile) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.SHA256
	}
	return out
}

// sentFiles are the files a deposit form carried, stored as the caller's
// uploads.
type sentFiles struct {
	shas []string
	last time.Time // when the last was stored
}

// drop discards them (a refused deposit): the bytes nothing else holds go
// at once.
func (f *sentFiles) drop(ctx context.Context, s *Handler) {
	if len(f.shas) > 0 {
		s.opts.Uploads.Discard(ctx, f.shas, f.last)
		f.shas = nil
	}
}

// readDepositMultipart reads a multipart deposit form part by part: its
// fields (at most MaxBodyBytes in all) and its files, each streamed to the
// content store under MaxUploadBytes and the caller's quotas, and recorded
// in sent. The form token is checked before any file's bytes are stored
// (it comes first in the form; the X-CSRF-Token header also does). A body
// larger than the limits allow is refused before it is read.
func (s *Handler) readDepositMultipart(w http.ResponseWriter, r *http.Request, sent *sentFiles) (url.Values, []depositFile, error) {
	limit := s.opts.MaxBodyBytes + maxDepositFiles*s.opts.MaxUploadBytes
	if limit < 0 { // overflow: no total limit but the per-file one
		limit = 1<<63 - 1
	}
	if r.ContentLength > limit {
		return nil, nil, tooLargeUpload(r.ContentLength, s.opts.MaxUploadBytes)
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, nil, shelfmark.Errorf(shelfmark.EINVALID, "The form cannot be read: %v", err)
	}
	form := url.Values{}
	var files []depositFile
	checked := false
	fieldBytes := int64(0)
	// rows, kept files, the other fields and the files, with room to spare
	maxParts := 3*maxFormRows + 5*maxDepositFiles + 100
	for n := 0; ; n++ {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if n == maxParts {
			return nil, nil, shelfmark.Errorf(shelfmark.EINVALID, "The form has more than %d parts.", maxParts)
		}
		if err != nil {
			return nil, nil, shelfmark.Errorf(shelfmark.EINVALID, "The form cannot be read: %v", err)
		}
		name := part.FormName()
		if part.FileName() == "" && name != "files" {
			b, err := io.ReadAll(io.LimitReader(part, s.opts.MaxBodyBytes-fieldBytes+1))
			if err != nil {
				return nil, nil, shelfmark.Errorf(shelfmark.EINVALID, "The form cannot be read: %v", err)
			}
			if fieldBytes += int64(len(b)); fieldBytes > s.opts.MaxBodyBytes {
				return nil, nil, shelfmark.Errorf(shelfmark.ETOOLARGE, "The form's fields are larger than this server accepts (%d bytes).", s.opts.MaxBodyBytes)
			}
			form.Add(name, string(b))
			continue
		}
		if name != "files" {
			continue // a file under another name is not ours: skipped
		}
		if !checked {
			if err := s.checkCSRF(r, form.Get(csrfField)); err != nil {
				return nil, nil, err
			}
			checked = true
		}
		fname, err := shelfmark.CleanFileName(part.FileName())
		if err != nil {
			return nil, nil, err
		}
		if fname == "" {
			continue // the empty file input of a form sent without files
		}
		if len(files) == maxDepositFiles {
			return nil, nil, shelfmark.Errorf(shelfmark.EINVALID, "At most %d files are taken in one deposit.", maxDepositFiles)
		}
		ctype := part.Header.Get("Content-Type")
		if ctype == "" {
			ctype = "application/octet-stream"
		}
		f := &shelfmark.File{Name: fname, MediaType: ctype, Use: "original"}
		if err := shelfmark.CheckFile(f); err != nil {
			return nil, nil, err
		}
		blob, at, err := s.opts.Uploads.Store(r.Context(), part, -1, shelfmark.PutOptions{MaxSize: s.opts.MaxUploadBytes})
		if err != nil {
			switch shelfmark.ErrorCode(err) {
			case shelfmark.ETOOLARGE:
				return nil, nil, tooLargeUpload(-1, s.opts.MaxUploadBytes)
			case shelfmark.EQUOTA, shelfmark.EUNAVAILABLE:
				return nil, nil, err
			}
			return nil, nil, fmt.Errorf("deposit: store %q: %w", fname, err)
		}
		sent.shas, sent.last = append(sent.shas, blob.Digests[shelfmark.SHA256]), at
		files = append(files, depositFile{Name: fname, MediaType: f.MediaType, SHA256: blob.Digests[shelfmark.SHA256], Size: blob.Size})
	}
	if !checked {
		if err := s.checkCSRF(r, form.Get(csrfField)); err != nil {
			return nil, nil, err
		}
	}
	return form, files, nil
}

// tooLargeUpload is the error of a deposit whose file is larger than the
// server takes (size -1 when unknown).
func tooLargeUpload(size, limit int64) error {
	msg := fmt.Sprintf("A file is larger than this server accepts (%s).", kit.HumanBytes(limit))
	if size >= 0 {
		msg = fmt.Sprintf("The upload is %s; this server accepts files up to %s.", kit.HumanBytes(size), kit.HumanBytes(limit))
	}
	return &shelfmark.Error{Code: shelfmark.ETOOLARGE, Message: msg, Details: map[string]any{"limit": limit}}
}

// metaStep does what the metadata rows of a form (deposit, edit, new
// collection) ask before anything is saved: "add" shows the form again
// with one more row, and rows that make no valid metadata (no title, a
// bad value) show it again with why (400); again shows the form with a
// status and a message. answered says the page was answered (with err);
// otherwise stmts are the rows' statements. The values of picked fields
// are checked and written as they are stored (pickers.go); stored are
// the statements the resource holds (none for a new one), whose values
// are kept as they are.
func metaStep(p *uiPage, form url.Values, rows *[]metaRow, stored []shelfmark.Statement, again func(int, string) error) (stmts []shelfmark.Statement, answered bool, err error) {
	if form.Get("add") != "" {
		*rows = append(*rows, metaRow{})
		(*rows)[len(*rows)-1].Field = nextField(*rows)
		return nil, true, again(http.StatusOK, "")
	}
	if err := p.pickers.settle(p, *rows, stored); err != nil {
		return nil, true, again(http.StatusBadRequest, shelfmark.ErrorMessage(err))
	}
	stmts, err = statementsOf(*rows)
	switch {
	case err == errNoTitle:
		return nil, true, again(http.StatusBadRequest, p.T("deposit.notitle"))
	case err != nil:
		return nil, true, again(http.StatusBadRequest, shelfmark.ErrorMessage(err))
	}
	return stmts, false, nil
}
