package ui

// This file serves the interface's static files (style sheet, scripts,
// the front-end packages taken from the npm registry), embedded in the
// binary. Pages name each file with a hash of its content, so a browser
// keeps it for a year and fetches it again only when it changed.

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/shelfmark/shelfmark"
)

// staticFiles is the embedded tree of static files and their hashes.
type staticFiles struct {
	fsys fs.FS
	hash map[string]string // name -> first 12 hex digits of its SHA-256
}

func newStaticFiles(fsys fs.FS, dir string) (*staticFiles, error) {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		return nil, err
	}
	st := &staticFiles{fsys: sub, hash: map[string]string{}}
	err = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		st.hash[p] = hex.EncodeToString(sum[:6])
		return nil
	})
	return st, err
}

// url is the address of a static file, with its content hash; a name
// that is not embedded panics while the template runs (a build fault the
// tests find).
func (st *staticFiles) url(name string) (string, error) {
	h, ok := st.hash[name]
	if !ok {
		return "", shelfmark.Errorf(shelfmark.ENOTFOUND, "no static file %q", name)
	}
	return "/static/" + name + "?v=" + h, nil
}

// staticFile handles GET /static/{file...}.
func (s *Handler) staticFile(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("file")
	h, ok := s.ui.static.hash[name]
	if !ok || strings.Contains(name, "..") {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "No such file: /static/%s.", name)
	}
	b, err := fs.ReadFile(s.ui.static.fsys, name)
	if err != nil {
		return err
	}
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	hd := w.Header()
	hd.Set("Content-Type", ctype)
	hd.Set("ETag", `"`+h+`"`)
	if r.URL.Query().Get("v") == h {
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		hd.Set("Cache-Control", "public, max-age=300")
	}
	if r.Header.Get("If-None-Match") == `"`+h+`"` {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	hd.Set("Content-Length", strconv.Itoa(len(b)))
	if r.Method == http.MethodHead {
		return nil
	}
	_, err = w.Write(b)
	return err
}
