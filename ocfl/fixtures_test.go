package ocfl

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixtureDir holds the OCFL editors' 1.1 fixtures (see testdata/fixtures/README.md).
const fixtureDir = "testdata/fixtures/1.1"

// fixtureCodes are the codes a fixture's directory name gives
// ("E049_E050_E054_bad_version_block_values" gives E049, E050, E054).
func fixtureCodes(name string) []string {
	var codes []string
	for _, part := range strings.Split(name, "_") {
		if len(part) == 4 && (part[0] == 'E' || part[0] == 'W') && strings.Trim(part[1:], "0123456789") == "" {
			codes = append(codes, part)
		}
	}
	return codes
}

// TestFixtures validates every object of the OCFL editors' fixtures: good
// objects with no error and no warning, warn objects with no error and at
// least one of the warnings their names give, bad objects with at least
// one error, which should be one their names give.
func TestFixtures(t *testing.T) {
	ctx := context.Background()
	counts := map[string]int{}
	for _, kind := range []string{"good-objects", "warn-objects", "bad-objects"} {
		dirs, err := os.ReadDir(filepath.Join(fixtureDir, kind))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dirs {
			name := d.Name()
			t.Run(kind+"/"+name, func(t *testing.T) {
				fsys, err := NewDirFS(filepath.Join(fixtureDir, kind))
				if err != nil {
					t.Fatal(err)
				}
				rep := ValidateObject(ctx, fsys, name)
				want := fixtureCodes(name)
				switch kind {
				case "good-objects":
					if len(rep.Errors)+len(rep.Warnings) > 0 {
						t.Errorf("good object: want no finding, got\n%s", rep)
					}
				case "warn-objects":
					if !rep.Valid() {
						t.Errorf("warn object: want no error, got\n%s", rep)
					}
					for _, c := range want {
						if !rep.Has(c) {
							t.Errorf("warn object: want warning %s, got\n%s", c, rep)
						}
					}
				case "bad-objects":
					if rep.Valid() {
						t.Fatalf("bad object: want an error, got none\n%s", rep)
					}
					found := false
					var missing []string
					for _, c := range want {
						found = found || rep.Has(c)
						if !rep.Has(c) {
							missing = append(missing, c)
						}
					}
					if len(missing) > 0 {
						t.Logf("named codes not reported: %v (reported %v)", missing, rep.Codes())
					}
					if !found {
						t.Errorf("bad object: want one of %v, got\n%s", want, rep)
					}
				}
				if !t.Failed() {
					counts[kind]++
				}
			})
		}
	}
	t.Logf("fixtures passing: good %d, warn %d, bad %d", counts["good-objects"], counts["warn-objects"], counts["bad-objects"])
}
