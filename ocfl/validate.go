package ocfl

import (
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// registeredExtensions are the names of the OCFL community extensions
// (https://ocfl.github.io/extensions/); an extension directory with another
// name draws a warning (W013 in an object, W016 in a storage root).
var registeredExtensions = map[string]bool{
	"0001-digest-algorithms":                               true,
	"0002-flat-direct-storage-layout":                      true,
	"0003-hash-and-id-n-tuple-storage-layout":              true,
	"0004-hashed-n-tuple-storage-layout":                   true,
	"0005-mutable-head":                                    true,
	"0006-flat-omit-prefix-storage-layout":                 true,
	"0007-n-tuple-omit-prefix-storage-layout":              true,
	"0008-schema-registry":                                 true,
	"0009-digest-algorithms":                               true,
	"0010-differential-n-tuple-omit-prefix-storage-layout": true,
	"0011-direct-clean-path-layout":                        true,
	"0012-hash-and-no-prefix-id-n-tuple-storage-layout":    true,
}

// fixityHash returns the hash of a fixity algorithm this package can
// check; others are ignored, as the spec requires (E028).
func fixityHash(alg string) hash.Hash {
	switch alg {
	case "md5":
		return md5.New()
	case "sha1":
		return sha1.New()
	case "sha256":
		return sha256.New()
	case "sha512":
		return sha512.New()
	case "sha512/256":
		return sha512.New512_256()
	}
	return nil
}

// ValidateObject validates the OCFL object whose root is dir on fsys
// against OCFL 1.1 (and 1.0 for objects that declare it): its
// declaration, root and version inventories and sidecars, the files of
// every version directory, and the digest of every content file (and every
// fixity value of an algorithm it knows: md5, sha1, sha256, sha512,
// sha512/256). Paths in the report are relative to dir. Cost: one read of
// every content file (all its digests are computed in the same pass), every
// inventory read once (each at most MaxInventorySize), one listing per
// directory, and the comparison of each version inventory's versions with
// the root inventory's (versions² × files in all, in memory).
func ValidateObject(ctx context.Context, fsys FS, dir string) *Report {
	v := &objectValidator{ctx: ctx, fsys: fsys, dir: dir, r: &Report{}}
	v.validate()
	return v.r
}

type objectValidator struct {
	ctx     context.Context
	fsys    FS
	dir     string
	r       *Report
	spec    string // the declared spec version
	inv     *Inventory
	invData []byte
	// content is every file under a version's content directory, by
	// content path.
	content map[string]bool
	// need is, for each content path, the digest algorithms to compute.
	need map[string]map[string]bool
	// checks are the digest comparisons to make once digests are known.
	checks []digestCheck
}

type digestCheck struct {
	path, alg, want, code, where string
}

func (v *objectValidator) p(name string) string { return path.Join(v.dir, name) }

func (v *objectValidator) validate() {
	entries, err := v.fsys.ReadDir(v.ctx, v.dir)
	if err != nil {
		v.r.errorf("E003", ".", "cannot list the object root: %v", err)
		return
	}
	v.declaration(entries)
	if !hasEntry(entries, "inventory.json") {
		v.r.errorf("E063", "inventory.json", "the object root has no inventory.json")
		return
	}
	data, inv := v.readInventory("inventory.json")
	if inv == nil {
		return
	}
	v.inv, v.invData = inv, data
	if s := inventoryTypes[inv.Type]; s != "" && v.spec != "" && s != v.spec {
		v.r.errorf("E038", "inventory.json", "type %s does not match the declared OCFL %s", inv.Type, v.spec)
	}
	if inv.Versions == nil {
		return
	}
	v.rootEntries(entries)
	v.content = map[string]bool{}
	v.need = map[string]map[string]bool{}
	prevSpec := ""
	var versionInvs []*Inventory
	var versionNames []string
	for _, name := range inv.versionNames() {
		vinv, spec := v.versionDir(name)
		if vinv != nil {
			if prevSpec != "" && spec != "" && spec < prevSpec {
				v.r.errorf("E103", name+"/inventory.json", "inventory type is OCFL %s, earlier than the %s of a preceding version", spec, prevSpec)
			}
			if spec != "" {
				prevSpec = spec
			}
			versionInvs = append(versionInvs, vinv)
			versionNames = append(versionNames, name)
		}
	}
	if prevSpec != "" && v.spec != "" && prevSpec > v.spec {
		v.r.errorf("E103", ".", "a version inventory is OCFL %s, later than the object's declared %s", prevSpec, v.spec)
	}
	// Every file in a content directory must be in the manifest; every
	// manifest path must exist and have its digest.
	inManifest := map[string]bool{}
	for d, paths := range inv.Manifest {
		for _, cp := range paths {
			inManifest[cp] = true
			if !v.content[cp] {
				v.r.errorf("E092", cp, "the manifest lists %s, which does not exist", cp)
				continue
			}
			v.want(cp, inv.DigestAlgorithm, d, "E092", "inventory.json")
		}
	}
	var files []string
	for cp := range v.content {
		files = append(files, cp)
	}
	sort.Strings(files)
	for _, cp := range files {
		if !inManifest[cp] {
			v.r.errorf("E023", cp, "content file is not in the manifest")
		}
	}
	for alg, block := range inv.Fixity {
		if fixityHash(alg) == nil {
			continue
		}
		for d, paths := range block {
			for _, cp := range paths {
				if v.content[cp] {
					v.want(cp, alg, d, "E093", "inventory.json")
				}
			}
		}
	}
	// A version inventory's manifest must cover the content of its version
	// and earlier ones, with right digests.
	for i, vinv := range versionInvs {
		name := versionNames[i]
		n, _ := versionNumber(name)
		vm := map[string]bool{}
		for d, paths := range vinv.Manifest {
			for _, cp := range paths {
				vm[cp] = true
				if v.content[cp] {
					v.want(cp, vinv.DigestAlgorithm, d, "E092", name+"/inventory.json")
				} else {
					v.r.errorf("E092", name+"/inventory.json", "the manifest lists %s, which does not exist", cp)
				}
			}
		}
		for _, cp := range files {
			if k, ok := versionNumber(strings.SplitN(cp, "/", 2)[0]); ok && k <= n && !vm[cp] {
				v.r.errorf("E023", name+"/inventory.json", "content file %s is not in the manifest of %s", cp, name)
			}
		}
	}
	v.digests()
}

// want records that content path cp must have digest d in alg.
func (v *objectValidator) want(cp, alg, d, code, where string) {
	if v.need[cp] == nil {
		v.need[cp] = map[string]bool{}
	}
	v.need[cp][alg] = true
	v.checks = append(v.checks, digestCheck{path: cp, alg: alg, want: lower(d), code: code, where: where})
}

// digests reads each content file once, computing every digest asked of it,
// and reports the mismatches.
func (v *objectValidator) digests() {
	got := map[string]map[string]string{}
	paths := make([]string, 0, len(v.need))
	for cp := range v.need {
		paths = append(paths, cp)
	}
	sort.Strings(paths)
	for _, cp := range paths {
		if v.ctx.Err() != nil {
			v.r.errorf("E092", cp, "digests not checked: %v", v.ctx.Err())
			return
		}
		hs := map[string]hash.Hash{}
		var ws []io.Writer
		for alg := range v.need[cp] {
			h := fixityHash(alg)
			if alg == "sha512" || alg == "sha256" || h != nil {
				if h == nil {
					h, _ = newHash(alg)
				}
				hs[alg] = h
				ws = append(ws, h)
			}
		}
		rc, err := v.fsys.Open(v.ctx, v.p(cp))
		if err != nil {
			v.r.errorf("E092", cp, "cannot read: %v", err)
			continue
		}
		_, err = io.Copy(io.MultiWriter(ws...), rc)
		rc.Close()
		if err != nil {
			v.r.errorf("E092", cp, "cannot read: %v", err)
			continue
		}
		got[cp] = map[string]string{}
		for alg, h := range hs {
			got[cp][alg] = hex.EncodeToString(h.Sum(nil))
		}
	}
	for _, c := range v.checks {
		g, ok := got[c.path][c.alg]
		if ok && g != c.want {
			v.r.errorf(c.code, c.path, "%s digest is %s, but %s gives %s", c.alg, g, c.where, c.want)
		}
	}
}

// declaration checks the object's conformance declaration.
func (v *objectValidator) declaration(entries []Entry) {
	var decls []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name, "0=") {
			decls = append(decls, e.Name)
		}
	}
	if len(decls) != 1 {
		v.r.errorf("E003", ".", "the object root has %d conformance declarations (0=ocfl_object_…), not one", len(decls))
		return
	}
	name := decls[0]
	switch name {
	case "0=ocfl_object_1.1":
		v.spec = "1.1"
	case "0=ocfl_object_1.0":
		v.spec = "1.0"
	default:
		v.r.errorf("E004", name, "declaration is not 0=ocfl_object_1.1 (or 1.0)")
		return
	}
	data, err := ReadFile(v.ctx, v.fsys, v.p(name), 64)
	if err != nil || string(data) != name[2:]+"\n" {
		v.r.errorf("E007", name, "declaration's content is not %q followed by a newline", name[2:])
	}
}

// readInventory reads and checks the inventory at name (relative to the
// object root) and its sidecar.
func (v *objectValidator) readInventory(name string) ([]byte, *Inventory) {
	data, err := ReadFile(v.ctx, v.fsys, v.p(name), MaxInventorySize)
	if errors.Is(err, errTooLarge) {
		v.r.errorf("E033", name, "inventory is over the limit of %d bytes; not read", MaxInventorySize)
		return nil, nil
	}
	if err != nil {
		v.r.errorf("E033", name, "cannot read: %v", err)
		return nil, nil
	}
	inv := checkInventory(data, name, v.r)
	if inv == nil || inv.DigestAlgorithm == "" {
		return data, inv
	}
	side := name + "." + inv.DigestAlgorithm
	sdata, err := ReadFile(v.ctx, v.fsys, v.p(side), 1024)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		v.r.errorf("E058", side, "no inventory sidecar")
	case err != nil:
		v.r.errorf("E061", side, "cannot read the sidecar: %v", err)
	case sidecarDigest(sdata) == "":
		v.r.errorf("E061", side, "sidecar is not \"DIGEST inventory.json\"")
	case sidecarDigest(sdata) != hexDigest(inv.DigestAlgorithm, data):
		v.r.errorf("E060", side, "sidecar digest does not match the inventory's %s", hexDigest(inv.DigestAlgorithm, data))
	}
	return data, inv
}

// rootEntries checks that the object root holds nothing unexpected.
func (v *objectValidator) rootEntries(entries []Entry) {
	headNum, _ := versionNumber(v.inv.Head)
	for _, e := range entries {
		switch {
		case e.Irregular:
			v.r.errorf("E090", e.Name, "links and special files are not allowed")
		case strings.HasPrefix(e.Name, "0=") && !e.Dir, e.Name == "inventory.json" && !e.Dir,
			e.Name == "inventory.json."+v.inv.DigestAlgorithm && !e.Dir:
		case e.Name == "logs" && e.Dir:
		case e.Name == "extensions" && e.Dir:
			v.extensions()
		case e.Dir && v.inv.Versions[e.Name] != nil:
		default:
			if n, ok := versionNumber(e.Name); ok && e.Dir && n > headNum {
				v.r.errorf("E046", e.Name, "version directory beyond the root inventory's head %s", v.inv.Head)
			} else {
				v.r.errorf("E001", e.Name, "unexpected file or directory in the object root")
			}
		}
	}
}

// extensions checks the object's extensions directory.
func (v *objectValidator) extensions() {
	entries, err := v.fsys.ReadDir(v.ctx, v.p("extensions"))
	if err != nil {
		v.r.errorf("E067", "extensions", "cannot list: %v", err)
		return
	}
	for _, e := range entries {
		if !e.Dir {
			v.r.errorf("E067", "extensions/"+e.Name, "the extensions directory holds a file")
		} else if !registeredExtensions[e.Name] {
			v.r.warnf("W013", "extensions/"+e.Name, "extension %q is not a registered extension", e.Name)
		}
	}
}

// versionDir checks one version directory and returns its inventory (nil
// if it has none or it is unreadable) and that inventory's spec version.
func (v *objectValidator) versionDir(name string) (*Inventory, string) {
	entries, err := v.fsys.ReadDir(v.ctx, v.p(name))
	if err != nil {
		v.r.errorf("E010", name, "version directory is missing")
		return nil, ""
	}
	cdir := v.inv.contentDir()
	var vinv *Inventory
	var spec string
	hasInv := hasEntry(entries, "inventory.json")
	if hasInv {
		var data []byte
		data, vinv = v.readInventory(name + "/inventory.json")
		if vinv != nil {
			spec = inventoryTypes[vinv.Type]
			v.compareVersionInventory(name, vinv, data)
		}
	} else {
		v.r.warnf("W010", name, "version directory has no inventory.json")
	}
	for _, e := range entries {
		switch {
		case e.Irregular:
			v.r.errorf("E090", name+"/"+e.Name, "links and special files are not allowed")
		case e.Name == "inventory.json" && !e.Dir:
		case strings.HasPrefix(e.Name, "inventory.json.") && !e.Dir && vinv != nil && e.Name == "inventory.json."+vinv.DigestAlgorithm:
		case e.Dir && e.Name == cdir:
			v.contentTree(name + "/" + cdir)
		case e.Dir:
			v.r.warnf("W002", name+"/"+e.Name, "version directory holds a directory other than %s", cdir)
		default:
			v.r.errorf("E015", name+"/"+e.Name, "version directory holds a file other than its inventory and sidecar")
		}
	}
	return vinv, spec
}

// contentTree records every file under a content directory, reporting
// empty directories.
func (v *objectValidator) contentTree(dir string) {
	entries, err := v.fsys.ReadDir(v.ctx, v.p(dir))
	if err != nil {
		v.r.errorf("E024", dir, "cannot list: %v", err)
		return
	}
	if len(entries) == 0 {
		v.r.errorf("E024", dir, "empty directory in a content directory")
	}
	for _, e := range entries {
		p := dir + "/" + e.Name
		switch {
		case e.Irregular:
			v.r.errorf("E090", p, "links and special files are not allowed")
		case e.Dir:
			v.contentTree(p)
		default:
			v.content[p] = true
		}
	}
}

// compareVersionInventory checks a version directory's inventory against
// the root inventory.
func (v *objectValidator) compareVersionInventory(name string, vinv *Inventory, data []byte) {
	where := name + "/inventory.json"
	inv := v.inv
	if vinv.ID != inv.ID {
		v.r.errorf("E037", where, "id %q differs from the root inventory's %q", vinv.ID, inv.ID)
	}
	if vinv.Head != name {
		v.r.errorf("E040", where, "head %q is not its own version %s", vinv.Head, name)
	}
	if vinv.ContentDirectory != inv.ContentDirectory {
		v.r.errorf("E019", where, "contentDirectory %q differs from the root inventory's %q", vinv.ContentDirectory, inv.ContentDirectory)
	}
	if name == inv.Head && string(data) != string(v.invData) {
		v.r.errorf("E064", where, "the head version's inventory differs from the root inventory")
	}
	vidx := vinv.manifestIndex()
	ridx := inv.manifestIndex()
	for _, vn := range vinv.versionNames() {
		rv := inv.Versions[vn]
		vv := vinv.Versions[vn]
		if rv == nil {
			v.r.errorf("E066", where, "version %s is not in the root inventory", vn)
			continue
		}
		// Each logical path must resolve to the same content paths.
		a := resolve(vinv.logicalState(vn), vidx)
		b := resolve(inv.logicalState(vn), ridx)
		same := len(a) == len(b)
		for p, cps := range a {
			if b[p] != cps {
				same = false
			}
		}
		if !same {
			v.r.errorf("E066", where, "version %s has a different state from the root inventory's", vn)
		}
		if vv.created != rv.created || vv.Message != rv.Message || !sameUser(vv.User, rv.User) {
			v.r.warnf("W011", where, "version %s metadata (created, message or user) differs from the root inventory's", vn)
		}
	}
}

// resolve maps each logical path to its content paths (joined, sorted).
func resolve(state map[string]string, idx map[string][]string) map[string]string {
	out := make(map[string]string, len(state))
	for p, d := range state {
		cps := append([]string(nil), idx[lower(d)]...)
		sort.Strings(cps)
		out[p] = strings.Join(cps, "\x00")
	}
	return out
}

func sameUser(a, b *User) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
