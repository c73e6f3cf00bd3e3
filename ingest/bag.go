package ingest

import (
	"bufio"
	"context"
	"crypto/md5"
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
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
)

// bagAlgorithms are the manifest algorithms verified, with their digest
// constructors and hex lengths.
var bagAlgorithms = map[string]struct {
	new    func() hash.Hash
	hexLen int
}{
	"md5":    {md5.New, 32},
	"sha256": {sha256.New, 64},
	"sha512": {sha512.New, 128},
}

// bagInfoPredicates maps well-known bag-info.txt labels (lower-cased) to
// predicates; other labels use bagInfoPrefix.
var bagInfoPredicates = map[string]string{
	"external-description": shelfmark.NSDCTerms + "description",
	"source-organization":  shelfmark.NSDCTerms + "publisher",
	"bagging-date":         shelfmark.NSDCTerms + "created",
	"external-identifier":  shelfmark.NSDCTerms + "identifier",
	"bag-group-identifier": shelfmark.NSDCTerms + "isPartOf",
}

// BagInfoPredicate returns the predicate a bag-info.txt label maps to (see
// the package documentation).
func BagInfoPredicate(label string) string {
	if p, ok := bagInfoPredicates[strings.ToLower(label)]; ok {
		return p
	}
	return bagInfoPrefix + escapeIRIPart(label)
}

// bagSource yields bags, one item each.
type bagSource struct {
	dirs   []string // resolved bag directories still to read
	many   bool     // a directory of bags: skip entries without bagit.txt
	closed bool
}

// OpenBag reads one BagIt bag as one item (see the package documentation).
func OpenBag(dir string) (Source, error) {
	real, err := resolveRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("ingest: open bag: %w", err)
	}
	return &bagSource{dirs: []string{real}}, nil
}

// OpenBags reads a directory whose subdirectories holding bagit.txt are
// bags, one item each, in natural order of their names.
func OpenBags(dir string) (Source, error) {
	real, err := resolveRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("ingest: open bags: %w", err)
	}
	entries, err := os.ReadDir(real)
	if err != nil {
		return nil, fmt.Errorf("ingest: open bags: %w", err)
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return NaturalCompare(a.Name(), b.Name()) })
	s := &bagSource{many: true}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			s.dirs = append(s.dirs, filepath.Join(real, e.Name()))
		}
	}
	return s, nil
}

// Next implements Source.
func (s *bagSource) Next(ctx context.Context) (*Item, error) {
	for {
		if s.closed {
			return nil, errClosed
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(s.dirs) == 0 {
			return nil, io.EOF
		}
		dir := s.dirs[0]
		if s.many {
			if _, err := os.Lstat(filepath.Join(dir, "bagit.txt")); errors.Is(err, fs.ErrNotExist) {
				s.dirs = s.dirs[1:]
				continue
			}
		}
		item, err := readBag(ctx, dir)
		if err != nil && ctx.Err() != nil {
			return nil, ctx.Err() // retry this bag on the next call
		}
		s.dirs = s.dirs[1:]
		return item, err
	}
}

// Close implements Source.
func (s *bagSource) Close() error {
	s.closed = true
	s.dirs = nil
	return nil
}

// bagReader verifies one bag.
type bagReader struct {
	ctx context.Context
	dir string // resolved bag directory, the input root
	key string
}

// fail returns the ItemError for the bag.
func (b *bagReader) fail(p string, err error, format string, args ...any) error {
	return &ItemError{Key: b.key, Path: p, Reason: fmt.Sprintf(format, args...), Err: err}
}

// manifest is a parsed manifest-<alg>.txt or tagmanifest-<alg>.txt.
type manifest struct {
	name  string            // file name
	alg   string            // "sha256"
	sums  map[string]string // slash path -> lower-case hex
	order []string          // paths in file order
}

// readBag verifies the bag in dir completely and returns its item.
func readBag(ctx context.Context, dir string) (*Item, error) {
	b := &bagReader{ctx: ctx, dir: dir, key: "bag:" + filepath.Base(dir)}
	return b.read()
}

func (b *bagReader) read() (*Item, error) {
	// bagit.txt: the declaration.
	decl, err := b.readTagFile("bagit.txt", true)
	if err != nil {
		return nil, err
	}
	version, encoding := "", ""
	for _, f := range decl {
		switch f.Label {
		case "BagIt-Version":
			version = f.Value
		case "Tag-File-Character-Encoding":
			encoding = f.Value
		}
	}
	if version != "0.97" && !strings.HasPrefix(version, "1.") {
		return nil, b.fail("bagit.txt", nil, "bagit.txt: BagIt-Version %q is not supported (1.x or 0.97)", version)
	}
	if !strings.EqualFold(encoding, "UTF-8") {
		return nil, b.fail("bagit.txt", nil, "bagit.txt: Tag-File-Character-Encoding %q is not supported (UTF-8)", encoding)
	}
	if _, err := os.Lstat(filepath.Join(b.dir, "fetch.txt")); err == nil {
		return nil, b.fail("fetch.txt", nil, "the bag has a fetch.txt; bags whose payload must be fetched are not supported")
	}
	info, err := b.readTagFile("bag-info.txt", false)
	if err != nil {
		return nil, err
	}

	// Manifests.
	entries, err := os.ReadDir(b.dir)
	if err != nil {
		return nil, b.fail(".", err, "cannot list the bag: %v", err)
	}
	var payloadMans, tagMans []*manifest
	var unsupported []string
	for _, e := range entries {
		name := e.Name()
		var tag bool
		var alg string
		if a, ok := strings.CutPrefix(name, "tagmanifest-"); ok {
			tag, alg = true, a
		} else if a, ok := strings.CutPrefix(name, "manifest-"); ok {
			alg = a
		} else {
			continue
		}
		alg, ok := strings.CutSuffix(alg, ".txt")
		if !ok {
			continue
		}
		if _, ok := bagAlgorithms[alg]; !ok {
			if !tag {
				unsupported = append(unsupported, alg)
			}
			continue
		}
		m, err := b.readManifest(name, alg, tag)
		if err != nil {
			return nil, err
		}
		if tag {
			tagMans = append(tagMans, m)
		} else {
			payloadMans = append(payloadMans, m)
		}
	}
	if len(payloadMans) == 0 {
		if len(unsupported) > 0 {
			return nil, b.fail(".", nil, "the bag has only manifests of unsupported algorithms (%s); sha256, sha512 or md5 is needed", strings.Join(unsupported, ", "))
		}
		return nil, b.fail(".", nil, "the bag has no payload manifest (manifest-sha256.txt, manifest-sha512.txt or manifest-md5.txt)")
	}

	// The payload as it is on disk.
	payload, names, err := b.listPayload()
	if err != nil {
		return nil, err
	}
	for _, m := range payloadMans {
		for _, p := range m.order {
			if _, ok := payload[p]; !ok {
				return nil, b.fail(p, nil, "payload file %s listed in %s does not exist", p, m.name)
			}
		}
		for _, p := range names {
			if _, ok := m.sums[p]; !ok {
				return nil, b.fail(p, nil, "payload file %s is not listed in %s", p, m.name)
			}
		}
	}

	// Payload-Oxum, before reading any bytes.
	var octets int64
	for _, p := range names {
		octets += payload[p].size
	}
	for _, f := range info {
		if !strings.EqualFold(f.Label, "Payload-Oxum") {
			continue
		}
		o, n, ok := parseOxum(f.Value)
		if !ok {
			return nil, b.fail("bag-info.txt", nil, "bag-info.txt: Payload-Oxum %q is not \"octets.files\"", f.Value)
		}
		if o != octets || n != int64(len(names)) {
			return nil, b.fail("bag-info.txt", nil, "Payload-Oxum %s does not match the payload: %d octets in %d files", f.Value, octets, len(names))
		}
	}

	// Checksums.
	slices.SortFunc(names, NaturalCompare)
	for _, p := range names {
		if err := b.verify(p, payload[p].path, payloadMans); err != nil {
			return nil, err
		}
	}
	for _, m := range tagMans {
		for _, p := range m.order {
			abs, reason := joinInside(b.dir, p)
			if reason != "" {
				return nil, b.fail(p, nil, "%s: %s", m.name, reason)
			}
			cf, reason, err := checkFile(b.dir, abs, p)
			if reason != "" {
				return nil, b.fail(p, err, "%s: tag %s", m.name, reason)
			}
			if err := b.verify(p, cf.path, []*manifest{m}); err != nil {
				return nil, err
			}
		}
	}

	var sha *manifest
	for _, m := range payloadMans {
		if m.alg == "sha256" {
			sha = m
		}
	}
	if rec := shelfmarkRecordName(info); rec != "" {
		return b.readShelfmarkBag(rec, payload, names, sha)
	}

	// The item.
	item := &Item{Key: bagKey(b.key, payloadMans, names, info), FormerKey: b.key}
	for _, f := range info {
		if strings.EqualFold(f.Label, "Payload-Oxum") || f.Value == "" {
			continue
		}
		pred := BagInfoPredicate(f.Label)
		obj := shelfmark.NewLiteral(f.Value)
		if pred == shelfmark.NSDCTerms+"created" {
			if _, err := time.Parse(time.DateOnly, f.Value); err == nil {
				obj = shelfmark.NewTypedLiteral(f.Value, xsdDate)
			}
		}
		item.Metadata = append(item.Metadata, shelfmark.Statement{Predicate: pred, Object: obj})
	}
	if !hasTitle(item.Metadata) {
		item.Metadata = append(item.Metadata, shelfmark.Statement{Predicate: dcTitle, Object: shelfmark.NewLiteral(filepath.Base(b.dir))})
	}
	item.Metadata = shelfmark.DedupeStatements(item.Metadata)
	for _, p := range names {
		name := strings.TrimPrefix(p, "data/")
		ref := FileRef{Path: payload[p].path, Name: name, Size: payload[p].size, MediaType: mediaType(name)}
		if sha != nil {
			ref.SHA256 = sha.sums[p]
		}
		item.Files = append(item.Files, ref)
	}
	return item, nil
}

// bagKey is the source key of a verified bag: former ("bag:" + the bag
// directory's name) + "#" + a fingerprint of its content as the bag states
// it: every supported payload manifest (algorithm, and each payload path
// with its checksum, names in natural order) and the bag-info.txt fields
// in order. Two bags of the same name with different payload or metadata
// get different keys; the same bag read again, from anywhere, the same.
func bagKey(former string, mans []*manifest, names []string, info []BagInfoField) string {
	mans = slices.Clone(mans)
	slices.SortFunc(mans, func(a, b *manifest) int { return strings.Compare(a.alg, b.alg) })
	fp := newFingerprint("bag")
	fp.num(int64(len(mans)))
	for _, m := range mans {
		fp.str(m.alg)
		fp.num(int64(len(names)))
		for _, p := range names {
			fp.str(p)
			fp.str(m.sums[p])
		}
	}
	fp.num(int64(len(info)))
	for _, f := range info {
		fp.str(f.Label)
		fp.str(f.Value)
	}
	return former + "#" + fp.sum()
}

// readTagFile reads and parses a "Label: value" tag file of the bag.
func (b *bagReader) readTagFile(name string, required bool) ([]BagInfoField, error) {
	p := filepath.Join(b.dir, name)
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) && !required {
		return nil, nil
	}
	cf, reason, err := checkFile(b.dir, p, name)
	if reason != "" {
		return nil, b.fail(name, err, "%s", reason)
	}
	f, err := os.Open(cf.path)
	if err != nil {
		return nil, b.fail(name, err, "%s cannot be read: %v", name, err)
	}
	defer f.Close()
	fields, err := ParseBagInfo(f)
	if err != nil {
		return nil, b.fail(name, err, "%s: %v", name, err)
	}
	return fields, nil
}

// readManifest reads a manifest of the bag, checking its paths.
func (b *bagReader) readManifest(name, alg string, tag bool) (*manifest, error) {
	cf, reason, err := checkFile(b.dir, filepath.Join(b.dir, name), name)
	if reason != "" {
		return nil, b.fail(name, err, "%s", reason)
	}
	f, err := os.Open(cf.path)
	if err != nil {
		return nil, b.fail(name, err, "%s cannot be read: %v", name, err)
	}
	defer f.Close()
	m := &manifest{name: name, alg: alg, sums: make(map[string]string)}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	sc.Split(scanAnyLines)
	want := bagAlgorithms[alg].hexLen
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if n == 1 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		i := strings.IndexAny(line, " \t")
		if i < 0 {
			return nil, b.fail(name, nil, "%s: line %d is not \"checksum path\"", name, n)
		}
		sum, rest := line[:i], strings.TrimLeft(line[i+1:], " \t")
		if rest == "" {
			return nil, b.fail(name, nil, "%s: line %d is not \"checksum path\"", name, n)
		}
		sum = strings.ToLower(sum)
		if _, err := hex.DecodeString(sum); err != nil || len(sum) != want {
			return nil, b.fail(name, nil, "%s: line %d: %q is not a %s checksum", name, n, sum, alg)
		}
		p := decodeManifestPath(rest)
		if reason := checkManifestPath(p, tag); reason != "" {
			return nil, b.fail(p, nil, "%s: line %d: %s", name, n, reason)
		}
		if _, dup := m.sums[p]; dup {
			return nil, b.fail(p, nil, "%s: line %d: %s is listed twice", name, n, p)
		}
		m.sums[p] = sum
		m.order = append(m.order, p)
	}
	if err := sc.Err(); err != nil {
		return nil, b.fail(name, err, "%s cannot be read: %v", name, err)
	}
	return m, nil
}

// checkManifestPath returns why a decoded manifest path is unacceptable, or
// "".
func checkManifestPath(p string, tag bool) string {
	switch {
	case strings.HasPrefix(p, "/") || filepath.IsAbs(p):
		return fmt.Sprintf("path %s is absolute", p)
	case strings.ContainsRune(p, 0):
		return fmt.Sprintf("path %q contains a NUL character", p)
	case path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../"):
		if c := path.Clean(p); c == ".." || strings.HasPrefix(c, "../") {
			return fmt.Sprintf("path %s escapes the bag", p)
		}
		return fmt.Sprintf("path %s is not in canonical form", p)
	case !tag && !strings.HasPrefix(p, "data/"):
		return fmt.Sprintf("payload path %s is not under data/", p)
	}
	return ""
}

// decodeManifestPath decodes the %0A, %0D and %25 escapes of RFC 8493
// §2.1.3; other percent signs stay as they are.
func decodeManifestPath(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			switch strings.ToUpper(s[i+1 : i+3]) {
			case "0A":
				out.WriteByte('\n')
				i += 2
				continue
			case "0D":
				out.WriteByte('\r')
				i += 2
				continue
			case "25":
				out.WriteByte('%')
				i += 2
				continue
			}
		}
		out.WriteByte(s[i])
	}
	return out.String()
}

// parseOxum reads a Payload-Oxum "octets.files".
func parseOxum(v string) (octets, files int64, ok bool) {
	a, c, found := strings.Cut(strings.TrimSpace(v), ".")
	if !found {
		return 0, 0, false
	}
	o, err1 := strconv.ParseInt(a, 10, 64)
	n, err2 := strconv.ParseInt(c, 10, 64)
	if err1 != nil || err2 != nil || o < 0 || n < 0 {
		return 0, 0, false
	}
	return o, n, true
}

// listPayload walks data/ and returns its files by slash path ("data/a")
// and their paths.
func (b *bagReader) listPayload() (map[string]checkedFile, []string, error) {
	data := filepath.Join(b.dir, "data")
	fi, err := os.Lstat(data)
	if err != nil {
		return nil, nil, b.fail("data", err, "the bag has no data/ directory: %v", err)
	}
	if !fi.IsDir() {
		return nil, nil, b.fail("data", nil, "data is not a directory (symbolic links are not followed)")
	}
	payload := make(map[string]checkedFile)
	var names []string
	err = filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			rel, _ := filepath.Rel(b.dir, p)
			return b.fail(filepath.ToSlash(rel), err, "cannot list %s: %v", filepath.ToSlash(rel), err)
		}
		if err := b.ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(b.dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		var cf checkedFile
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return b.fail(rel, err, "payload file %s cannot be read: %v", rel, err)
			}
			cf = checkedFile{path: p, size: info.Size()}
		} else {
			var reason string
			cf, reason, err = checkFile(b.dir, p, rel)
			if reason != "" {
				return b.fail(rel, err, "payload %s", reason)
			}
		}
		payload[rel] = cf
		names = append(names, rel)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return payload, names, nil
}

// verify computes the digests of the file at abs (named p in the bag) for
// every manifest in mans and compares them.
func (b *bagReader) verify(p, abs string, mans []*manifest) error {
	hashes := make([]hash.Hash, len(mans))
	writers := make([]io.Writer, len(mans))
	for i, m := range mans {
		hashes[i] = bagAlgorithms[m.alg].new()
		writers[i] = hashes[i]
	}
	f, err := os.Open(abs)
	if err != nil {
		return b.fail(p, err, "%s cannot be read: %v", p, err)
	}
	defer f.Close()
	w := io.MultiWriter(writers...)
	buf := make([]byte, 256<<10)
	for {
		if err := b.ctx.Err(); err != nil {
			return err
		}
		n, err := f.Read(buf)
		w.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return b.fail(p, err, "%s cannot be read: %v", p, err)
		}
	}
	for i, m := range mans {
		got := hex.EncodeToString(hashes[i].Sum(nil))
		if want := m.sums[p]; got != want {
			return b.fail(p, nil, "%s: %s checksum mismatch: %s says %s, the file has %s", p, m.alg, m.name, want, got)
		}
	}
	return nil
}
