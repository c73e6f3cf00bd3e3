package ocfl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// inventoryTypes maps each known inventory type URI to its spec version.
var inventoryTypes = map[string]string{
	"https://ocfl.io/1.0/spec/#inventory": "1.0",
	InventoryType:                         "1.1",
}

// digestLengths gives the hex length of each digest algorithm whose form is
// checked (the content algorithms and the fixity algorithms of the spec and
// extension 0001).
var digestLengths = map[string]int{
	"sha512": 128, "sha256": 64, "sha1": 40, "md5": 32,
	"blake2b-512": 128, "blake2b-160": 40, "blake2b-256": 64, "blake2b-384": 96,
	"sha512/256": 64,
}

var (
	createdRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$`)
	uriRE     = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$`)
	hexRE     = regexp.MustCompile(`^[0-9a-fA-F]+$`)
)

// lower lower-cases an ASCII digest.
func lower(s string) string { return strings.ToLower(s) }

// versionNumber parses "v3" or "v003" to 3; ok is false for anything else.
func versionNumber(name string) (int, bool) {
	if len(name) < 2 || name[0] != 'v' {
		return 0, false
	}
	for _, c := range name[1:] {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(name[1:])
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// versionName formats version n with the padding of like ("v1" style when
// like is unpadded, "v003" when like is "v001").
func versionName(n int, like string) string {
	if len(like) > 2 && like[1] == '0' {
		return fmt.Sprintf("v%0*d", len(like)-1, n)
	}
	return "v" + strconv.Itoa(n)
}

// pathProblem says what is wrong with a logical or content path, or "".
// bad is the code for a bad element, ends the code for a leading or
// trailing slash.
func pathProblem(p string) (code int, msg string) {
	if p == "" {
		return 1, "is empty"
	}
	if strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
		return 2, "begins or ends with /"
	}
	for _, el := range strings.Split(p, "/") {
		switch el {
		case "":
			return 1, "has an empty element (//)"
		case ".", "..":
			return 1, "has a . or .. element"
		}
	}
	return 0, ""
}

// conflicts returns the paths of set that are also a directory prefix of
// another path of set ("a" and "a/b"), each once.
func conflicts(set map[string]bool) []string {
	var out []string
	seen := map[string]bool{}
	for p := range set {
		for i := 0; i < len(p); i++ {
			if p[i] == '/' && set[p[:i]] && !seen[p[:i]] {
				seen[p[:i]] = true
				out = append(out, p[:i])
			}
		}
	}
	sort.Strings(out)
	return out
}

// stringList reads a JSON array of strings; ok is false for anything else.
func stringList(v any) ([]string, bool) {
	arr, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// checkInventory parses data as the inventory at where and reports every
// rule it breaks. It returns nil only when data is not a JSON object.
func checkInventory(data []byte, where string, r *Report) *Inventory {
	if len(data) > MaxInventorySize {
		r.errorf("E033", where, "inventory is %d bytes, over the limit of %d bytes; not read", len(data), MaxInventorySize)
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top any
	if err := dec.Decode(&top); err != nil {
		r.errorf("E033", where, "inventory is not valid JSON: %v", err)
		return nil
	}
	if _, err := dec.Token(); err == nil {
		r.errorf("E033", where, "inventory has data after its JSON object")
	}
	m, ok := top.(map[string]any)
	if !ok {
		r.errorf("E033", where, "inventory is not a JSON object")
		return nil
	}
	inv := &Inventory{}
	for k := range m {
		switch k {
		case "id", "type", "digestAlgorithm", "head", "contentDirectory", "manifest", "versions", "fixity":
		default:
			r.errorf("E102", where, "unknown key %q", k)
		}
	}
	// id
	if v, present := m["id"]; !present {
		r.errorf("E036", where, "no id")
	} else if s, ok := v.(string); !ok || s == "" {
		r.errorf("E037", where, "id is not a non-empty string")
	} else {
		inv.ID = s
		if !uriRE.MatchString(s) {
			r.warnf("W005", where, "id %q is not a URI", s)
		}
	}
	// type
	if v, present := m["type"]; !present {
		r.errorf("E036", where, "no type")
	} else if s, ok := v.(string); !ok || inventoryTypes[s] == "" {
		r.errorf("E038", where, "type %v is not an OCFL inventory type", v)
	} else {
		inv.Type = s
	}
	// digestAlgorithm
	if v, present := m["digestAlgorithm"]; !present {
		r.errorf("E036", where, "no digestAlgorithm")
	} else if s, _ := v.(string); s == "sha512" {
		inv.DigestAlgorithm = s
	} else if s == "sha256" {
		inv.DigestAlgorithm = s
		r.warnf("W004", where, "digestAlgorithm is sha256; sha512 is recommended")
	} else {
		r.errorf("E025", where, "digestAlgorithm %v is neither sha512 nor sha256", v)
	}
	// contentDirectory
	if v, present := m["contentDirectory"]; present {
		s, ok := v.(string)
		switch {
		case !ok || s == "" || strings.Contains(s, "/"):
			r.errorf("E017", where, "contentDirectory %v must be a name without /", v)
		case s == "." || s == "..":
			r.errorf("E018", where, "contentDirectory must not be . or ..")
		default:
			inv.ContentDirectory = s
		}
	}
	// head
	if v, present := m["head"]; !present {
		r.errorf("E036", where, "no head")
	} else if s, ok := v.(string); !ok {
		r.errorf("E040", where, "head is not a string")
	} else {
		inv.Head = s
	}
	checkVersions(m, inv, where, r)
	checkManifest(m, inv, where, r)
	checkFixity(m, inv, where, r)
	checkStates(inv, where, r)
	return inv
}

// checkVersions reads and checks the versions block.
func checkVersions(m map[string]any, inv *Inventory, where string, r *Report) {
	v, present := m["versions"]
	if !present {
		r.errorf("E043", where, "no versions block")
		return
	}
	vm, ok := v.(map[string]any)
	if !ok {
		r.errorf("E044", where, "versions is not a JSON object")
		return
	}
	if len(vm) == 0 {
		r.errorf("E008", where, "versions is empty: an object has at least one version")
	}
	inv.Versions = make(map[string]*Version, len(vm))
	nums := map[int]string{}
	padWidth := -1
	padded := false
	for name, raw := range vm {
		n, ok := versionNumber(name)
		if !ok {
			r.errorf("E104", where, "version name %q is not v followed by a positive number", name)
			continue
		}
		if len(name) > 2 && name[1] == '0' {
			padded = true
		}
		if padWidth == -1 {
			padWidth = len(name)
		}
		nums[n] = name
		inv.Versions[name] = checkVersion(raw, name, where, r)
	}
	if len(nums) > 0 {
		max := 0
		for n := range nums {
			if n > max {
				max = n
			}
		}
		if _, ok := nums[1]; !ok {
			r.errorf("E009", where, "version numbers do not start at 1")
		}
		for i := 1; i <= max; i++ {
			if _, ok := nums[i]; !ok {
				r.errorf("E010", where, "version %d is missing from the sequence up to %d", i, max)
				break
			}
		}
		if padded {
			r.warnf("W001", where, "version names are zero-padded")
			for _, name := range nums {
				if len(name) != padWidth {
					r.errorf("E012", where, "version names mix padded and unpadded forms or widths (%s)", name)
					break
				}
			}
			if top := nums[max]; len(top) > 2 && top[1] != '0' {
				r.errorf("E011", where, "zero-padded version names have run out of digits at %s", top)
			}
		}
		if inv.Head != "" && inv.Head != nums[max] {
			r.errorf("E040", where, "head %q is not the highest version %q", inv.Head, nums[max])
		}
	}
}

// checkVersion reads and checks one version block.
func checkVersion(raw any, name, where string, r *Report) *Version {
	ver := &Version{}
	vm, ok := raw.(map[string]any)
	if !ok {
		r.errorf("E047", where, "version %s is not a JSON object", name)
		return ver
	}
	for k := range vm {
		switch k {
		case "created", "message", "user", "state":
		default:
			r.errorf("E102", where, "version %s has unknown key %q", name, k)
		}
	}
	if c, present := vm["created"]; !present {
		r.errorf("E048", where, "version %s has no created", name)
	} else if s, ok := c.(string); !ok || !createdRE.MatchString(s) {
		r.errorf("E049", where, "version %s created %v is not an RFC 3339 date-time with a time zone, to the second", name, c)
	} else if t, err := time.Parse(time.RFC3339Nano, s); err != nil {
		r.errorf("E049", where, "version %s created %q: %v", name, s, err)
	} else {
		ver.Created = t
		ver.created = s
	}
	if msg, present := vm["message"]; !present {
		r.warnf("W007", where, "version %s has no message", name)
	} else if s, ok := msg.(string); !ok {
		r.errorf("E094", where, "version %s message is not a string", name)
	} else {
		ver.Message = s
		ver.hasMessage = true
	}
	if u, present := vm["user"]; !present {
		r.warnf("W007", where, "version %s has no user", name)
	} else if um, ok := u.(map[string]any); !ok {
		r.errorf("E054", where, "version %s user is not a JSON object", name)
	} else {
		user := &User{}
		if n, ok := um["name"].(string); !ok || n == "" {
			r.errorf("E054", where, "version %s user has no name string", name)
		} else {
			user.Name = n
		}
		if a, present := um["address"]; !present {
			r.warnf("W008", where, "version %s user has no address", name)
		} else if s, ok := a.(string); !ok {
			r.errorf("E054", where, "version %s user address is not a string", name)
		} else {
			user.Address = s
			if !uriRE.MatchString(s) {
				r.warnf("W009", where, "version %s user address %q is not a URI", name, s)
			}
		}
		for k := range um {
			if k != "name" && k != "address" {
				r.errorf("E102", where, "version %s user has unknown key %q", name, k)
			}
		}
		ver.User = user
	}
	st, present := vm["state"]
	if !present {
		r.errorf("E048", where, "version %s has no state", name)
		return ver
	}
	sm, ok := st.(map[string]any)
	if !ok {
		r.errorf("E050", where, "version %s state is not a JSON object", name)
		return ver
	}
	ver.State = make(map[string][]string, len(sm))
	logical := map[string]bool{}
	for d, raw := range sm {
		paths, ok := stringList(raw)
		if !ok {
			r.errorf("E050", where, "version %s state of %s is not an array of paths", name, d)
			continue
		}
		for _, p := range paths {
			switch code, msg := pathProblem(p); code {
			case 1:
				r.errorf("E052", where, "version %s logical path %q %s", name, p, msg)
			case 2:
				r.errorf("E053", where, "version %s logical path %q %s", name, p, msg)
			}
			if logical[p] {
				r.errorf("E095", where, "version %s logical path %q appears more than once", name, p)
			}
			logical[p] = true
		}
		ver.State[d] = paths
	}
	for _, p := range conflicts(logical) {
		r.errorf("E095", where, "version %s logical path %q is both a file and a directory", name, p)
	}
	return ver
}

// checkManifest reads and checks the manifest block.
func checkManifest(m map[string]any, inv *Inventory, where string, r *Report) {
	v, present := m["manifest"]
	if !present {
		r.errorf("E041", where, "no manifest block")
		return
	}
	mm, ok := v.(map[string]any)
	if !ok {
		r.errorf("E106", where, "manifest is not a JSON object")
		return
	}
	inv.Manifest = make(map[string][]string, len(mm))
	seen := map[string]bool{}
	contentPaths := map[string]bool{}
	for d, raw := range mm {
		if want := digestLengths[inv.DigestAlgorithm]; want > 0 && (len(d) != want || !hexRE.MatchString(d)) {
			r.errorf("E025", where, "manifest digest %q is not a %s digest in hex", d, inv.DigestAlgorithm)
		}
		if seen[lower(d)] {
			r.errorf("E096", where, "manifest digest %s appears more than once (ignoring case)", d)
		}
		seen[lower(d)] = true
		paths, ok := stringList(raw)
		if !ok || len(paths) == 0 {
			r.errorf("E092", where, "manifest entry of %s is not a non-empty array of content paths", d)
			continue
		}
		for _, p := range paths {
			checkContentPath(p, inv, where, r)
			if contentPaths[p] {
				r.errorf("E101", where, "content path %q appears more than once", p)
			}
			contentPaths[p] = true
		}
		inv.Manifest[d] = paths
	}
	for _, p := range conflicts(contentPaths) {
		r.errorf("E101", where, "content path %q is both a file and a directory", p)
	}
}

// checkContentPath checks one content path's form and that it lies in a
// version's content directory.
func checkContentPath(p string, inv *Inventory, where string, r *Report) bool {
	switch code, msg := pathProblem(p); code {
	case 1:
		r.errorf("E099", where, "content path %q %s", p, msg)
		return false
	case 2:
		r.errorf("E100", where, "content path %q %s", p, msg)
		return false
	}
	parts := strings.SplitN(p, "/", 3)
	if len(parts) < 3 || inv.Versions[parts[0]] == nil || parts[1] != inv.contentDir() {
		r.errorf("E042", where, "content path %q is not in the %s directory of a version of this inventory", p, inv.contentDir())
		return false
	}
	return true
}

// checkFixity reads and checks the optional fixity block.
func checkFixity(m map[string]any, inv *Inventory, where string, r *Report) {
	v, present := m["fixity"]
	if !present {
		return
	}
	fm, ok := v.(map[string]any)
	if !ok {
		r.errorf("E111", where, "fixity is not a JSON object")
		return
	}
	inManifest := map[string]bool{}
	for _, paths := range inv.Manifest {
		for _, p := range paths {
			inManifest[p] = true
		}
	}
	inv.Fixity = make(map[string]map[string][]string, len(fm))
	for alg, raw := range fm {
		am, ok := raw.(map[string]any)
		if !ok {
			r.errorf("E057", where, "fixity block of %s is not a JSON object", alg)
			continue
		}
		block := make(map[string][]string, len(am))
		seen := map[string]bool{}
		for d, rawPaths := range am {
			if want := digestLengths[alg]; want > 0 && (len(d) != want || !hexRE.MatchString(d)) {
				r.errorf("E057", where, "fixity %s digest %q is not in hex of the right length", alg, d)
			}
			if seen[lower(d)] {
				r.errorf("E097", where, "fixity %s digest %s appears more than once (ignoring case)", alg, d)
			}
			seen[lower(d)] = true
			paths, ok := stringList(rawPaths)
			if !ok {
				r.errorf("E057", where, "fixity %s entry of %s is not an array of content paths", alg, d)
				continue
			}
			for _, p := range paths {
				if checkContentPath(p, inv, where, r) && !inManifest[p] {
					r.errorf("E057", where, "fixity %s content path %q is not in the manifest", alg, p)
				}
			}
			block[d] = paths
		}
		inv.Fixity[alg] = block
	}
}

// checkStates checks that every state digest is in the manifest (E050) and
// every manifest digest in some state (E107).
func checkStates(inv *Inventory, where string, r *Report) {
	if inv.Manifest == nil || inv.Versions == nil {
		return
	}
	// State digests must match manifest digests exactly (case included).
	manifest := map[string]bool{}
	for d := range inv.Manifest {
		manifest[d] = true
	}
	used := map[string]bool{}
	for _, name := range inv.versionNames() {
		ver := inv.Versions[name]
		digests := make([]string, 0, len(ver.State))
		for d := range ver.State {
			digests = append(digests, d)
		}
		sort.Strings(digests)
		for _, d := range digests {
			used[d] = true
			if !manifest[d] {
				r.errorf("E050", where, "version %s state digest %s is not in the manifest (digests must match exactly)", name, d)
			}
		}
	}
	for d := range inv.Manifest {
		if !used[d] {
			r.errorf("E107", where, "manifest digest %s is in no version's state", d)
		}
	}
}
