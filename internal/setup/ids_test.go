package setup

import (
	"net/http"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestServeIDsAreKeyed: each new data directory gets its own id secret, so
// two repositories give their first resources unrelated ids (not the ids
// of the legacy mapping, which anyone could compute), and each server
// finds its resources by the ids it handed out.
func TestServeIDsAreKeyed(t *testing.T) {
	legacy := map[string]bool{}
	for k := int64(1); k <= 1000; k++ {
		legacy[string(shelfmark.LegacyIDCodec().Encode(k))] = true
	}
	var ids []string
	for i := 0; i < 2; i++ {
		base, hc := startServeAdmin(t, ServeConfig{})
		w := createWork(t, hc, base, "ids")
		if legacy[w.ID] {
			t.Fatalf("server %d gave its first work the legacy id %s", i, w.ID)
		}
		if status, resp, err := do(hc, http.MethodGet, base+"/api/v1/resources/"+w.ID, "", nil, nil); err != nil || status != http.StatusOK {
			t.Fatalf("server %d: GET its work %s: %d %s %v", i, w.ID, status, resp, err)
		}
		ids = append(ids, w.ID)
	}
	if ids[0] == ids[1] {
		t.Fatalf("two new repositories gave their first work the same id %s", ids[0])
	}
}
