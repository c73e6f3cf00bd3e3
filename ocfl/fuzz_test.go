package ocfl

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzInventory: any bytes given to the inventory parser give a report
// (never a panic), an inventory only when the input is a JSON object, and
// an inventory without errors marshals to JSON that parses again without
// errors.
func FuzzInventory(f *testing.F) {
	for _, p := range []string{
		"good-objects/spec-ex-full/inventory.json",
		"good-objects/minimal_one_version_one_file/inventory.json",
		"good-objects/ocfl_object_all_fixity_digests/inventory.json",
		"bad-objects/E049_E050_E054_bad_version_block_values/inventory.json",
		"bad-objects/E095_conflicting_logical_paths/inventory.json",
		"warn-objects/W001_W004_W005_zero_padded_versions/inventory.json",
	} {
		data, err := os.ReadFile(filepath.Join(fixtureDir, filepath.FromSlash(p)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"versions": {"v1": {"state": {"x": ["a", "a/b"]}}}}`))
	f.Add([]byte(`[]`))
	// a date whose UTC form has five digits of year (it must be written back as read)
	f.Add([]byte(`{"id":"info:x","type":"https://ocfl.io/1.1/spec/#inventory","digestAlgorithm":"sha512","head":"v1","manifest":{},` +
		`"versions":{"v1":{"created":"9999-12-31T23:59:59-01:00","message":"m","user":{"name":"n","address":"mailto:x"},"state":{}}}}`))
	f.Add([]byte(`{"manifest": {"": [""]}, "fixity": {"md5": {"": "x"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		inv, rep := ParseInventory(data)
		if rep == nil {
			t.Fatal("no report")
		}
		if inv == nil && rep.Valid() {
			t.Fatal("no inventory and no error")
		}
		if inv == nil || !rep.Valid() {
			return
		}
		out, err := inv.Marshal()
		if err != nil {
			t.Fatalf("marshal a valid inventory: %v", err)
		}
		inv2, rep2 := ParseInventory(out)
		if !rep2.Valid() {
			t.Fatalf("a valid inventory re-marshalled is invalid:\n%s\n%s", rep2, out)
		}
		if inv2.ID != inv.ID || inv2.Head != inv.Head || len(inv2.Manifest) != len(inv.Manifest) || len(inv2.Versions) != len(inv.Versions) {
			t.Fatalf("round trip changed the inventory:\n%s", out)
		}
	})
}
