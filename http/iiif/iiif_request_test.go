package iiif

import (
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// fuzzPyramid is a 2,000 × 1,100 page with 512-pixel tiles at scales 1, 2
// and 4, a 400 × 220 thumbnail and a 1,600 × 880 access copy.
var fuzzPyramid = shelfmark.TileInfo{Width: 2000, Height: 1100,
	Tiles: []shelfmark.TileSet{{Width: 512, ScaleFactors: []int{1, 2, 4}}},
	Sizes: []shelfmark.TileSize{{Width: 400, Height: 220, Use: shelfmark.UseThumbnail}, {Width: 1600, Height: 880, Use: shelfmark.UseAccess}}}

// fuzzEntries are the pyramid's tiles at scale 1 and its one tile at 4.
func fuzzEntries(entry string) bool {
	return entry == "0,0,512,512/512,512/0/default.jpg" || entry == "1536,1024,464,76/464,76/0/default.jpg" ||
		entry == "0,0,2000,1100/500,275/0/default.jpg"
}

// TestResolveImage: the forms of a request that name a tile or a size
// the pyramid holds resolve to it.
func TestResolveImage(t *testing.T) {
	for _, c := range []struct{ region, size, want string }{
		{"0,0,512,512", "512,512", "entry 0,0,512,512/512,512/0/default.jpg"},
		{"0,0,512,512", "512,", "entry 0,0,512,512/512,512/0/default.jpg"},
		{"0,0,512,512", "max", "entry 0,0,512,512/512,512/0/default.jpg"},
		{"1536,1024,512,512", "464,", "entry 1536,1024,464,76/464,76/0/default.jpg"}, // clipped at the edge
		{"1536,1024,464,76", "464,76", "entry 1536,1024,464,76/464,76/0/default.jpg"},
		{"full", "500,275", "entry 0,0,2000,1100/500,275/0/default.jpg"},
		{"full", "500,", "entry 0,0,2000,1100/500,275/0/default.jpg"},
		{"full", "max", "use access"},
		{"0,0,2000,1100", "1600,880", "use access"},
		{"full", ",220", "use thumbnail"},
		{"full", "!400,400", "use thumbnail"},
	} {
		got, err := resolveImage(&fuzzPyramid, fuzzEntries, c.region, c.size, "0", "default.jpg")
		s := "entry " + got.entry
		if got.use != "" {
			s = "use " + got.use
		}
		if err != nil || s != c.want {
			t.Errorf("%s/%s: %q, %v; want %s", c.region, c.size, s, err, c.want)
		}
	}
}

// FuzzResolveImage: any request either resolves to a tile the pyramid
// holds or a size it lists, or is refused with a 400; never a panic.
func FuzzResolveImage(f *testing.F) {
	for _, s := range [][4]string{
		{"full", "max", "0", "default.jpg"}, {"0,0,512,512", "512,", "0", "default.jpg"}, {"pct:1,2,3,4", "^!5,5", "!90", "gray.png"},
		{"99999999,0,1,1", ",0", "360", "default.jpg"}, {"0,0,1,1", "!,", "1e3", "default."}, {"square", "pct:50", "-0", "color.webp"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, region, size, rotation, file string) {
		got, err := resolveImage(&fuzzPyramid, fuzzEntries, region, size, rotation, file)
		if err != nil {
			if shelfmark.ErrorCode(err) != shelfmark.EINVALID || shelfmark.ErrorMessage(err) == "" {
				t.Fatalf("%s/%s/%s/%s: %v is not a 400 with a message", region, size, rotation, file, err)
			}
			return
		}
		switch {
		case got.entry != "" && !fuzzEntries(got.entry), got.entry == "" && got.use != shelfmark.UseThumbnail && got.use != shelfmark.UseAccess:
			t.Fatalf("%s/%s/%s/%s resolved to %+v", region, size, rotation, file, got)
		case rotation != "0" || file != "default.jpg" || strings.Contains(size, "^"):
			t.Fatalf("%s/%s/%s/%s resolved although level 0 does not offer it", region, size, rotation, file)
		}
	})
}

// TestInfoSizes: sizes are listed unless OpenSeadragon would take them
// for the pyramid's levels (as many as the levels above full size, or
// one more).
func TestInfoSizes(t *testing.T) {
	two := []shelfmark.TileSize{{Width: 400, Height: 220}, {Width: 1600, Height: 880}}
	for _, c := range []struct {
		scales []int
		sizes  []shelfmark.TileSize
		want   int
	}{
		{[]int{1, 2, 4}, two, 0},    // levels 2: 2 sizes would be read as levels
		{[]int{1, 2}, two, 0},       // levels 1: 2 = levels + 1
		{[]int{1, 2, 4, 8}, two, 2}, // levels 3
		{[]int{1, 2, 4, 8, 16}, two, 2},
		{[]int{1}, two[:1], 0},       // levels 0: 1 = levels + 1
		{[]int{1, 2, 4}, two[:1], 1}, // levels 2, one size
	} {
		info := shelfmark.TileInfo{Width: 2000, Height: 1100, Tiles: []shelfmark.TileSet{{Width: 512, ScaleFactors: c.scales}}, Sizes: c.sizes}
		if got := infoSizes(&info); len(got) != c.want {
			t.Errorf("scale factors %v, %d sizes: %d listed, want %d", c.scales, len(c.sizes), len(got), c.want)
		}
	}
}
