package staging

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/shelfmark/shelfmark"
)

// ImportPath resolves a server path asked for: it must be absolute, lie
// inside one of the import roots both as written and with symbolic links
// resolved, and be a directory. A path outside the roots is refused
// before it is looked at, so that the answer tells nothing of the rest of
// the server's files.
func ImportPath(importRoots []string, p string) (string, error) {
	if len(importRoots) == 0 {
		return "", shelfmark.Errorf(shelfmark.EINVALID, "This server takes no server paths for bulk ingests (it has no import root); upload a zip of the files instead.")
	}
	if !filepath.IsAbs(p) || strings.ContainsRune(p, 0) {
		return "", shelfmark.Errorf(shelfmark.EINVALID, "The server path %q must be an absolute path inside an import root.", p)
	}
	clean := filepath.Clean(p)
	outside := shelfmark.Errorf(shelfmark.EINVALID, "The server path %q is not inside an import root of this server (%s).", p, strings.Join(importRoots, ", "))
	var roots []string
	for _, root := range importRoots {
		abs, err := filepath.Abs(root)
		if err != nil {
			continue
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			continue
		}
		if inside(abs, clean) || inside(real, clean) {
			roots = append(roots, real)
		}
	}
	if len(roots) == 0 {
		return "", outside
	}
	real, err := filepath.EvalSymlinks(clean)
	if err != nil {
		return "", shelfmark.Errorf(shelfmark.EINVALID, "The server path %q cannot be read: %v", p, unwrapPath(err))
	}
	ok := false
	for _, root := range roots {
		ok = ok || inside(root, real)
	}
	if !ok {
		return "", shelfmark.Errorf(shelfmark.EINVALID, "The server path %q leads outside the import roots through a symbolic link; it is refused.", p)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", shelfmark.Errorf(shelfmark.EINVALID, "The server path %q cannot be read: %v", p, unwrapPath(err))
	}
	if !fi.IsDir() {
		return "", shelfmark.Errorf(shelfmark.EINVALID, "The server path %q is not a folder.", p)
	}
	return real, nil
}

// inside reports whether the clean absolute path p is root or below it.
func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
