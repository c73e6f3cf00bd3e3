package sqlite

// int shelfmarkStemLangs(const char ***paz);
import "C"

import (
	"unsafe"

	// the Snowball stemmers (libstemmer_c) that the tokenizer shelfmark
	// (stem.c) calls: the package's C objects are linked with this one's
	_ "github.com/tebeka/snowball"
)

// stemLanguages returns the languages the tokenizer shelfmark (stem.c)
// stems besides English, by their Snowball names, in its order, which
// must be the root package's SearchLanguages.
func stemLanguages() []string {
	var az **C.char
	n := int(C.shelfmarkStemLangs(&az))
	out := make([]string, n)
	for i, p := range unsafe.Slice(az, n) {
		out[i] = C.GoString(p)
	}
	return out
}
