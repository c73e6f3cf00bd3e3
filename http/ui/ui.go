package ui

// This file holds the web interface's frame: its routes, its templates
// (server-rendered HTML from Go templates, embedded in the binary with its
// style sheet, scripts and message catalogs), the page every template
// receives, and the HTML error pages. The pages themselves are in the
// files named for what they show. Every page calls the same
// repository operations as the REST API, with the request's caller on its
// context, so the engine's access policy decides what a page shows and
// does.

import (
	"bytes"
	"cmp"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/http/labels"
)

//go:embed locales static templates
var uiFiles embed.FS

// uiCSP is the Content-Security-Policy of the interface's pages: scripts,
// styles, images and form targets from the server itself only, no inline
// script (JSON-LD data blocks are not run), no framing.
const uiCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// ui holds what the interface's pages share: their templates, the message
// catalogs and the versioned names of the static files.
type ui struct {
	pages    map[string]*template.Template
	catalogs *labels.Catalogs
	static   *staticFiles
	// pickers are the cataloguing forms' pickers, by language
	// (pickers.go)
	pickers map[string]*pickers
}

// newUI parses the embedded templates and catalogs; a fault there is a
// fault of the build, found by the tests.
func newUI() (*ui, error) {
	cats, err := labels.Load(uiFiles, "locales")
	if err != nil {
		return nil, err
	}
	st, err := newStaticFiles(uiFiles, "static")
	if err != nil {
		return nil, err
	}
	u := &ui{pages: map[string]*template.Template{}, catalogs: cats, static: st, pickers: map[string]*pickers{}}
	enLangs := labels.LanguageChoices("en")
	for _, lang := range cats.Langs() {
		u.pickers[lang] = newPickers(cats, lang, enLangs)
	}
	base := template.New("layout").Funcs(u.funcs())
	if base, err = base.ParseFS(uiFiles, "templates/frame/*.html"); err != nil {
		return nil, fmt.Errorf("ui: parse the layout: %w", err)
	}
	names, err := fs.Glob(uiFiles, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("ui: list templates: %w", err)
	}
	for _, n := range names {
		t, err := base.Clone()
		if err != nil {
			return nil, fmt.Errorf("ui: clone the layout: %w", err)
		}
		if t, err = t.ParseFS(uiFiles, n); err != nil {
			return nil, fmt.Errorf("ui: parse %s: %w", n, err)
		}
		u.pages[strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")] = t
	}
	return u, nil
}

// uiPage is what every template receives as its dot.
type uiPage struct {
	// Lang is the language of the page ("en", "de").
	Lang  string
	msgs  map[string]string
	names map[string]string // language -> its own name
	// pickers are the cataloguing forms' pickers in Lang (pickers.go)
	pickers *pickers
	// Caller is who asks (never nil; anonymous when signed out).
	Caller *shelfmark.Caller
	// CSRF is the token every form posts back (see csrf.go).
	CSRF string
	// Title is the page's title, already translated.
	Title string
	// Path is the request's path and query, for "sign in and come back".
	Path string
	// Nav names the section of the navigation the page belongs to.
	Nav string
	// Base is the public URL of the server, without a trailing slash.
	Base string
	// Notice is a one-line message shown above the content (for example
	// "Saved."), already translated.
	Notice string
	// Data is the page's own content.
	Data any
	// Langs are the languages the interface ships, for the footer.
	Langs []string
	// Site is the repository's name and Institution the name of the
	// institution that runs it (Options.SiteName, Options.Institution).
	Site, Institution string
	// StyleNonce, when set, is a nonce the page's policy allows style
	// elements with (a work page's viewer; see viewer.go).
	StyleNonce string
	query      url.Values
	// cache marks a page that sends validators (see cachedPage); public
	// that what it shows is in public view, so that the page built for an
	// anonymous caller may be kept by shared caches.
	cache, public bool
}

// LangURL is the address of this page in another language.
func (p *uiPage) LangURL(lang string) string {
	q := url.Values{}
	for k, v := range p.query {
		q[k] = v
	}
	q.Set("lang", lang)
	return "?" + q.Encode()
}

// LangName is a language's name in that language, from its own catalog.
func (p *uiPage) LangName(lang string) string { return p.names[lang] }

// T translates a message of the page's language; args fill its verbs as
// fmt.Sprintf does. A key missing from the catalogs shows as itself (the
// tests refuse any).
func (p *uiPage) T(key string, args ...any) string {
	return labels.Translate(p.msgs, key, args...)
}

// SignedIn reports whether the caller is signed in.
func (p *uiPage) SignedIn() bool { return p.Caller.Authenticated() }

// MayWrite reports whether the caller's credential may write at all (the
// engine still decides each change).
func (p *uiPage) MayWrite() bool { return p.Caller.MayWrite() }

// IsAdmin reports whether the caller is an administrator.
func (p *uiPage) IsAdmin() bool { return p.Caller.IsAdmin() }

// funcs are the template functions shared by every page.
func (u *ui) funcs() template.FuncMap {
	return template.FuncMap{
		"static": u.static.url,
		"bytes":  kit.HumanBytes,
		"add":    func(a, b int) int { return a + b },
		"time": func(t time.Time) string {
			if t.IsZero() {
				return ""
			}
			return t.UTC().Format("2006-01-02 15:04 UTC")
		},
		"date": func(t time.Time) string {
			if t.IsZero() {
				return ""
			}
			return t.UTC().Format("2006-01-02")
		},
		// href builds an address with a query (see href.go); path
		// escapes one segment of a path
		"href": href,
		"path": url.PathEscape,
	}
}

// bufPool holds the buffers pages are rendered into, so that a template
// fault is an error page, not half a page.
var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// page starts the page data of a request.
func (s *Handler) page(w http.ResponseWriter, r *http.Request, titleKey string, args ...any) *uiPage {
	return s.newPage(w, r, true, titleKey, args...)
}

// cachedPage starts the data of a reading page that sends validators and
// may be cached (see render and conditional.go): the page of an anonymous caller
// carries no form token and sets no cookie of its own, so that it is the
// same page for every anonymous reader and a shared cache may keep it
// (it has no form to post; the sign-in page has its own token). The
// handler says whether what it shows is in public view (uiPage.public).
func (s *Handler) cachedPage(w http.ResponseWriter, r *http.Request, titleKey string, args ...any) *uiPage {
	signedIn := shelfmark.CallerFrom(r.Context()).Authenticated()
	p := s.newPage(w, r, signedIn, titleKey, args...)
	p.cache = true
	return p
}

// newPage starts the page data of a request, with its form token (and
// the browser's key, set when it has none) when csrf is set.
func (s *Handler) newPage(w http.ResponseWriter, r *http.Request, csrf bool, titleKey string, args ...any) *uiPage {
	lang := s.ui.catalogs.Negotiate(w, r)
	p := &uiPage{Lang: lang, msgs: s.ui.catalogs.Messages(lang), names: s.ui.catalogs.Names(), pickers: s.ui.pickers[lang], Caller: shelfmark.CallerFrom(r.Context()),
		Path: r.URL.RequestURI(), Base: s.deps.Base(r), Langs: s.ui.catalogs.Langs(), query: r.URL.Query(),
		Site: cmp.Or(s.opts.SiteName, DefaultSiteName), Institution: s.opts.Institution}
	if !p.Caller.Authenticated() && kit.SessionCookieSent(r) {
		// the session ended: the page is shown as to anyone signed out,
		// and the browser forgets the cookie
		http.SetCookie(w, s.deps.SessionCookie(r, "", -1))
	}
	if csrf {
		p.CSRF = s.csrfToken(w, r)
	}
	if n := r.URL.Query().Get("notice"); n != "" {
		// a notice a form's redirect asks for: only catalog messages
		p.Notice = p.msgs["notice."+n]
	}
	if titleKey != "" {
		p.Title = p.T(titleKey, args...)
	}
	return p
}

// render writes the template name with p as its dot and the given status.
func (s *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, p *uiPage) error {
	t, ok := s.ui.pages[name]
	if !ok {
		return fmt.Errorf("ui: no template %q", name)
	}
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)
	if err := t.ExecuteTemplate(buf, "layout", p); err != nil {
		return fmt.Errorf("ui: render %s: %w", name, err)
	}
	h := w.Header()
	kit.AddVary(h, pageVary...)
	if p.cache && status == http.StatusOK {
		if s.revalidated(w, r, p, buf.Bytes()) {
			return nil
		}
	} else {
		kit.SetCache(h, kit.CacheNoStore, 0)
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", pageCSP(p.StyleNonce))
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return nil
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// Routes are the interface's routes: pages and the forms they post, the
// static files and a bulk run's progress (answered as JSON). Each file of
// pages adds its own.
func (s *Handler) Routes() []kit.Route {
	rs := []kit.Route{
		{Method: "GET", Pattern: "/static/{file...}", Handle: s.staticFile},
		{Method: "GET", Pattern: "/login", Handle: s.uiWrap(s.loginPage)},
		{Method: "POST", Pattern: "/login", Handle: s.uiForm(s.loginForm)},
		{Method: "POST", Pattern: "/logout", Handle: s.uiForm(s.logoutForm)},
	}
	rs = append(rs, s.uiReadRoutes()...)
	rs = append(rs, s.uiWorkRoutes()...)
	rs = append(rs, s.uiHistoryRoutes()...) // work_history.go
	rs = append(rs, s.uiDepositRoutes()...)
	rs = append(rs, s.uiWorkspaceRoutes()...)   // workspace.go
	rs = append(rs, s.accessRequestRoutes()...) // access_requests.go
	rs = append(rs, bulkPages{s}.uiBulkRoutes()...)
	rs = append(rs, adminPages{s}.uiAdminRoutes()...)
	rs = append(rs, s.uiWebRoutes()...) // web archives (web.go)
	return rs
}

// uiWrap turns a page handler into one that answers its error as an HTML
// page (see Error), unless the response has begun; the shell then writes
// what error is left (a page that failed to render) and counts the
// request.
func (s *Handler) uiWrap(f kit.HandlerFunc) kit.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		sw := &startedWriter{ResponseWriter: w}
		err := f(sw, r)
		if err == nil || sw.started {
			return err
		}
		return s.Error(w, r, err)
	}
}

// startedWriter remembers whether a response has begun.
type startedWriter struct {
	http.ResponseWriter
	started bool
}

// WriteHeader notes that the response has begun.
func (w *startedWriter) WriteHeader(code int) {
	w.started = true
	w.ResponseWriter.WriteHeader(code)
}

// Write notes that the response has begun.
func (w *startedWriter) Write(b []byte) (int, error) {
	w.started = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *startedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// uiForm is uiWrap for a form's POST: the form is read (at most
// MaxBodyBytes) and its CSRF token checked before f runs.
func (s *Handler) uiForm(f kit.HandlerFunc) kit.HandlerFunc {
	return s.uiWrap(func(w http.ResponseWriter, r *http.Request) error {
		if err := s.readForm(w, r); err != nil {
			return err
		}
		return f(w, r)
	})
}

// readForm reads an urlencoded form (at most MaxBodyBytes) into
// r.PostForm and checks its CSRF token.
func (s *Handler) readForm(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
	if err := r.ParseForm(); err != nil {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			return shelfmark.Errorf(shelfmark.ETOOLARGE, "The form is larger than this server accepts (%d bytes).", maxErr.Limit)
		}
		return shelfmark.Errorf(shelfmark.EINVALID, "The form cannot be read: %v", err)
	}
	return s.checkCSRF(r, r.PostForm.Get(csrfField))
}

// uiErrorData is the content of an error page.
type uiErrorData struct {
	Status  int
	Code    string
	Heading string
	Message string
	// Deleted is set on the page of a tombstone (410).
	Deleted bool
}

// Error answers an error as an HTML page (and nil), or returns the error
// of rendering that page. A page that needs a signed-in
// caller sends an anonymous browser to the sign-in page (303) and back
// afterwards; everything else gets a page with the status the API would
// answer and the engine's message.
func (s *Handler) Error(w http.ResponseWriter, r *http.Request, err error) error {
	code := shelfmark.ErrorCode(err)
	status, ok := kit.StatusOf(code)
	if !ok {
		status = http.StatusInternalServerError
	}
	var maxErr *http.MaxBytesError
	if errors.As(err, &maxErr) {
		status, code = http.StatusRequestEntityTooLarge, shelfmark.ETOOLARGE
	}
	c := shelfmark.CallerFrom(r.Context())
	if status == http.StatusUnauthorized && !c.Authenticated() && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return nil
	}
	if status >= 500 {
		s.log.Error("page failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	key := "error.status"
	switch status {
	case http.StatusNotFound, http.StatusGone, http.StatusForbidden, http.StatusUnauthorized, http.StatusConflict,
		http.StatusRequestEntityTooLarge, http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusBadRequest:
		key = "error." + strconv.Itoa(status)
	}
	p := s.page(w, r, key)
	d := &uiErrorData{Status: status, Code: code, Heading: p.Title, Deleted: status == http.StatusGone}
	if status < 500 {
		d.Message = shelfmark.ErrorMessage(err)
	}
	p.Data = d
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		kit.RetryAfter(w, err)
	}
	return s.render(w, r, status, "error", p)
}
