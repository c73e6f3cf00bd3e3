package bagit

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark/internal/iox"
)

// Version is the BagIt version the bags declare in bagit.txt.
const Version = "1.0"

// algorithms are the manifest algorithms every bag carries, in the order
// their manifests are written.
var algorithms = [...]string{"sha512", "sha256"}

// Field is one "Label: value" line of bag-info.txt.
type Field struct {
	Label string
	Value string
}

// File is one payload file: Path is its slash path below data/ (no "..",
// no empty segment), Open supplies its bytes. Want, when set, maps an
// algorithm ("sha256", "sha512") to the hex digest the bytes must have:
// a mismatch fails the Write (the source was damaged).
type File struct {
	Path string
	Open func(ctx context.Context) (io.ReadCloser, error)
	Want map[string]string
}

// Bag is what Write writes: bag-info.txt's fields (Payload-Oxum is added)
// and the payload.
type Bag struct {
	Info    []Field
	Payload []File
}

// Digests are the digests of one written file, by algorithm.
type Digests map[string]string

// Result describes a written bag: its directory, the digests of every
// payload file by its path below data/, and its Payload-Oxum.
type Result struct {
	Dir     string
	Payload map[string]Digests
	Octets  int64
	Files   int
}

// ErrExists is returned by Write when the destination exists already.
var ErrExists = errors.New("bagit: the destination exists already")

// tmpInfix marks a bag in progress: ".NAME" + tmpInfix + random.
const tmpInfix = ".tmp-"

// Write writes b as a bag at dest (which must not exist), atomically (see
// the package documentation). Cost: the payload read once; two syncs per
// file.
func Write(ctx context.Context, dest string, b Bag) (res *Result, err error) {
	dest = filepath.Clean(dest)
	if _, err := os.Lstat(dest); err == nil {
		return nil, fmt.Errorf("%w: %s", ErrExists, dest)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("bagit: write %s: %w", dest, err)
	}
	parent, name := filepath.Dir(dest), filepath.Base(dest)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("bagit: write %s: %w", dest, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+name+tmpInfix)
	if err != nil {
		return nil, fmt.Errorf("bagit: write %s: %w", dest, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	res = &Result{Dir: dest, Payload: make(map[string]Digests, len(b.Payload))}
	seen := map[string]bool{}
	dirs := map[string]bool{tmp: true}
	for _, f := range b.Payload {
		if reason := checkPath(f.Path); reason != "" {
			return nil, fmt.Errorf("bagit: payload path %q %s", f.Path, reason)
		}
		if seen[f.Path] {
			return nil, fmt.Errorf("bagit: payload path %q is given twice", f.Path)
		}
		seen[f.Path] = true
		rel := path.Join("data", f.Path)
		ds, n, err := writeFile(ctx, tmp, rel, f, dirs)
		if err != nil {
			return nil, err
		}
		res.Payload[f.Path] = ds
		res.Octets += n
		res.Files++
	}
	if len(b.Payload) == 0 { // an empty payload still has data/
		if err := os.Mkdir(filepath.Join(tmp, "data"), 0o755); err != nil {
			return nil, fmt.Errorf("bagit: write %s: %w", dest, err)
		}
		dirs[filepath.Join(tmp, "data")] = true
	}
	tags := map[string]Digests{}
	put := func(name string, data []byte) error {
		ds, _, err := writeFile(ctx, tmp, name, File{Path: name, Open: bytesOpener(data)}, dirs)
		tags[name] = ds
		return err
	}
	if err := put("bagit.txt", []byte("BagIt-Version: "+Version+"\nTag-File-Character-Encoding: UTF-8\n")); err != nil {
		return nil, err
	}
	info := append([]Field(nil), b.Info...)
	info = append(info, Field{Label: "Payload-Oxum", Value: strconv.FormatInt(res.Octets, 10) + "." + strconv.Itoa(res.Files)})
	text, err := infoText(info)
	if err != nil {
		return nil, err
	}
	if err := put("bag-info.txt", text); err != nil {
		return nil, err
	}
	payload := map[string]Digests{}
	for p, ds := range res.Payload {
		payload["data/"+p] = ds
	}
	for _, alg := range algorithms {
		if err := put("manifest-"+alg+".txt", manifestText(payload, alg)); err != nil {
			return nil, err
		}
	}
	tagged := map[string]Digests{}
	for k, v := range tags {
		tagged[k] = v
	}
	for _, alg := range algorithms {
		name := "tagmanifest-" + alg + ".txt"
		if _, _, err := writeFile(ctx, tmp, name, File{Path: name, Open: bytesOpener(manifestText(tagged, alg))}, dirs); err != nil {
			return nil, err
		}
	}
	for d := range dirs {
		if err := syncDir(d); err != nil {
			return nil, fmt.Errorf("bagit: write %s: %w", dest, err)
		}
	}
	if err := os.Rename(tmp, dest); err != nil {
		return nil, fmt.Errorf("bagit: write %s: %w", dest, err)
	}
	if err := syncDir(parent); err != nil {
		return nil, fmt.Errorf("bagit: write %s: %w", dest, err)
	}
	return res, nil
}

// checkPath returns why p cannot be a payload path, or "".
func checkPath(p string) string {
	switch {
	case p == "":
		return "is empty"
	case strings.HasPrefix(p, "/"):
		return "is absolute"
	case strings.ContainsRune(p, 0):
		return "contains a NUL character"
	case path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../"):
		return "is not a clean relative path"
	}
	return ""
}

// bytesOpener opens data.
func bytesOpener(data []byte) func(context.Context) (io.ReadCloser, error) {
	return func(context.Context) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(string(data))), nil
	}
}

// writeFile copies f's bytes to root/rel, hashing them with every
// algorithm and checking f.Want, and syncs the file.
func writeFile(ctx context.Context, root, rel string, f File, dirs map[string]bool) (Digests, int64, error) {
	dst := filepath.Join(root, filepath.FromSlash(rel))
	dir := filepath.Dir(dst)
	if !dirs[dir] {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, 0, fmt.Errorf("bagit: %s: %w", rel, err)
		}
		for d := dir; d != root && !dirs[d]; d = filepath.Dir(d) {
			dirs[d] = true
		}
	}
	r, err := f.Open(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("bagit: %s: open: %w", rel, err)
	}
	defer r.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, 0, fmt.Errorf("bagit: %s: %w", rel, err)
	}
	defer out.Close()
	hs := map[string]hash.Hash{"sha512": sha512.New(), "sha256": sha256.New()}
	w := io.MultiWriter(out, hs["sha512"], hs["sha256"])
	n, err := iox.Copy(ctx, w, r)
	if err != nil {
		return nil, 0, fmt.Errorf("bagit: %s: copy: %w", rel, err)
	}
	if err := out.Sync(); err != nil {
		return nil, 0, fmt.Errorf("bagit: %s: sync: %w", rel, err)
	}
	if err := out.Close(); err != nil {
		return nil, 0, fmt.Errorf("bagit: %s: %w", rel, err)
	}
	ds := Digests{}
	for alg, h := range hs {
		ds[alg] = hex.EncodeToString(h.Sum(nil))
	}
	for alg, want := range f.Want {
		if got, ok := ds[alg]; ok && want != "" && !strings.EqualFold(got, want) {
			return nil, 0, fmt.Errorf("bagit: %s: the source's bytes have %s %s, %s was expected: the source is damaged", rel, alg, got, want)
		}
	}
	return ds, n, nil
}

// infoText is bag-info.txt: one "Label: value" line per field. A label
// must be non-empty without colon, surrounding space or line break; a
// value without line break (RFC 8493 allows folded lines, which some
// readers mishandle, so a break is refused instead).
func infoText(fields []Field) ([]byte, error) {
	var b strings.Builder
	for _, f := range fields {
		if f.Label == "" || strings.ContainsAny(f.Label, ":\r\n") || strings.TrimSpace(f.Label) != f.Label {
			return nil, fmt.Errorf("bagit: bag-info label %q is not a label (non-empty, no colon, no line break, no surrounding space)", f.Label)
		}
		if strings.ContainsAny(f.Value, "\r\n") {
			return nil, fmt.Errorf("bagit: bag-info value of %s holds a line break", f.Label)
		}
		b.WriteString(f.Label + ": " + f.Value + "\n")
	}
	return []byte(b.String()), nil
}

// manifestText is a manifest of files for alg: "digest path" lines sorted
// by path, with CR, LF and % in paths percent-encoded (RFC 8493 §2.1.3).
func manifestText(files map[string]Digests, alg string) []byte {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		b.WriteString(files[p][alg] + "  " + EncodePath(p) + "\n")
	}
	return []byte(b.String())
}

// EncodePath is a path as a manifest line writes it: %, CR and LF
// percent-encoded.
func EncodePath(p string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(p)
}

// syncDir makes a directory's entries durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// BaggingDate is the Bagging-Date value for t: its date in UTC.
func BaggingDate(t time.Time) string { return t.UTC().Format(time.DateOnly) }
