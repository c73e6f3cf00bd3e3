package ocfl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// InventoryType is the value of an OCFL 1.1 inventory's "type" key.
const InventoryType = "https://ocfl.io/1.1/spec/#inventory"

// MaxInventorySize is the largest inventory.json the package reads (64 MiB).
// A larger inventory is refused (E033, "inventory too large") before it is
// parsed, so reading or validating an object has a bounded memory cost. An
// inventory of a 10,000-file object with a few dozen versions is a few MiB.
const MaxInventorySize = 64 << 20

// Inventory is an OCFL inventory (inventory.json), as the spec defines it.
// Digests are kept exactly as written (the spec compares them without regard
// to case; Normalize lowers them).
type Inventory struct {
	// ID is the object's identifier; it never changes between versions.
	ID string `json:"id"`
	// Type is InventoryType for what this package writes.
	Type string `json:"type"`
	// DigestAlgorithm is "sha512" for what this package writes ("sha256" is
	// read too).
	DigestAlgorithm string `json:"digestAlgorithm"`
	// Head is the name of the most recent version ("v3").
	Head string `json:"head"`
	// ContentDirectory is the name of each version's content directory
	// when it is not "content".
	ContentDirectory string `json:"contentDirectory,omitempty"`
	// Manifest maps each digest to the content paths (relative to the
	// object root) holding those bytes.
	Manifest map[string][]string `json:"manifest"`
	// Versions maps each version name to its version block.
	Versions map[string]*Version `json:"versions"`
	// Fixity maps other digest algorithms to digest → content paths.
	Fixity map[string]map[string][]string `json:"fixity,omitempty"`
}

// Version is one version block of an inventory.
type Version struct {
	// Created is when the version was made; it is written in RFC 3339 to the
	// second, in UTC.
	Created time.Time `json:"-"`
	// Message says why the version was made.
	Message string `json:"-"`
	// User says who made it; nil writes no user key.
	User *User `json:"-"`
	// State maps each digest to the logical paths that hold it in this
	// version.
	State map[string][]string `json:"-"`
	// created is the created value as read, for comparisons between
	// inventories (W011).
	created string
	// hasMessage records whether a message key was present.
	hasMessage bool
}

// User is the user block of a version.
type User struct {
	// Name is the user's name (required by the spec).
	Name string `json:"name"`
	// Address is a URI for the user (mailto: or a URL), recommended.
	Address string `json:"address,omitempty"`
}

// versionJSON is the serialised form of a version block.
type versionJSON struct {
	Created string              `json:"created"`
	Message *string             `json:"message,omitempty"`
	State   map[string][]string `json:"state"`
	User    *User               `json:"user,omitempty"`
}

// MarshalJSON writes the version block: created as it was read, or for a
// new version Created in UTC, RFC 3339 to the second.
func (v *Version) MarshalJSON() ([]byte, error) {
	created := v.created // as read, kept exactly
	if created == "" {
		created = v.Created.UTC().Truncate(time.Second).Format(time.RFC3339)
	}
	j := versionJSON{Created: created, State: v.State, User: v.User}
	if v.Message != "" || v.hasMessage {
		m := v.Message
		j.Message = &m
	}
	if j.State == nil {
		j.State = map[string][]string{}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads a version block without checking it (ParseInventory
// checks).
func (v *Version) UnmarshalJSON(data []byte) error {
	var j versionJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339Nano, j.Created)
	if err != nil && j.Created != "" {
		return fmt.Errorf("ocfl: version created %q: %w", j.Created, err)
	}
	*v = Version{Created: t, created: j.Created, State: j.State, User: j.User}
	if j.Message != nil {
		v.Message, v.hasMessage = *j.Message, true
	}
	return nil
}

// Marshal returns the inventory as JSON (two-space indentation, keys in
// sorted order, path lists sorted): the same inventory always gives the
// same bytes. The inventory itself is not modified. Cost: linear in the
// number of paths (plus sorting them).
func (inv *Inventory) Marshal() ([]byte, error) {
	c := *inv
	c.Manifest = sortedPaths(inv.Manifest)
	c.Versions = make(map[string]*Version, len(inv.Versions))
	for n, v := range inv.Versions {
		vc := *v
		vc.State = sortedPaths(v.State)
		c.Versions[n] = &vc
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&c); err != nil {
		return nil, fmt.Errorf("ocfl: encode inventory of %q: %w", inv.ID, err)
	}
	return buf.Bytes(), nil
}

// sortedPaths copies a digest → paths map with each path list sorted (an
// empty map for nil).
func sortedPaths(m map[string][]string) map[string][]string {
	out := make(map[string][]string, len(m))
	for d, paths := range m {
		if sort.StringsAreSorted(paths) {
			out[d] = paths
			continue
		}
		c := append([]string(nil), paths...)
		sort.Strings(c)
		out[d] = c
	}
	return out
}

// ParseInventory parses and checks an inventory.json against the OCFL 1.1
// rules that need nothing but the inventory (the keys and their types,
// digests, version names and sequence, dates, logical and content paths,
// manifest and state consistency). It returns the inventory (nil when it
// could not be read at all) and the report of what is wrong; the inventory is
// usable only when the report has no error. Input over MaxInventorySize is
// refused. It never panics on malformed input; its cost is linear in the size
// of data (plus sorting the paths).
func ParseInventory(data []byte) (*Inventory, *Report) {
	r := &Report{}
	inv := checkInventory(data, "inventory.json", r)
	return inv, r
}

// versionNames returns the inventory's version names in version order.
func (inv *Inventory) versionNames() []string {
	names := make([]string, 0, len(inv.Versions))
	for n := range inv.Versions {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, _ := versionNumber(names[i])
		b, _ := versionNumber(names[j])
		return a < b
	})
	return names
}

// contentDir is the designated content directory's name.
func (inv *Inventory) contentDir() string {
	if inv.ContentDirectory != "" {
		return inv.ContentDirectory
	}
	return "content"
}

// logicalState maps each logical path of version v to its digest (as written
// in the inventory), or nil if there is no such version.
func (inv *Inventory) logicalState(v string) map[string]string {
	ver := inv.Versions[v]
	if ver == nil {
		return nil
	}
	out := make(map[string]string)
	for d, paths := range ver.State {
		for _, p := range paths {
			out[p] = d
		}
	}
	return out
}

// manifestIndex maps each lower-cased digest to its content paths.
func (inv *Inventory) manifestIndex() map[string][]string {
	out := make(map[string][]string, len(inv.Manifest))
	for d, paths := range inv.Manifest {
		out[lower(d)] = paths
	}
	return out
}
