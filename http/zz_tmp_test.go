package http

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

func TestTmpManifestTail(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	w, _ := scannedBook(t, e, 1200, shelfmark.Public, titled("Twelve hundred pages"))
	path := "/iiif/" + string(w.ID) + "/manifest"
	for i := 0; i < 20; i++ {
		e.do("GET", path, nil)
	}
	var d []time.Duration
	for i := 0; i < 400; i++ {
		t0 := time.Now()
		if r := e.do("GET", path, nil); r.Status != http.StatusOK {
			t.Fatal(r.Status)
		}
		d = append(d, time.Since(t0))
	}
	slices.Sort(d)
	fmt.Printf("p50 %v p90 %v p99 %v max %v\n", d[200], d[360], d[396], d[399])
}
