package sqlstore

import (
	"strconv"
	"testing"
)

// TestSharedRebind: Shared fills the statements a dialect leaves empty,
// rewriting PostgreSQL's placeholders with the dialect's, and keeps those
// it sets.
func TestSharedRebind(t *testing.T) {
	d := Shared(Dialect{
		Arg:   func(n int) string { return "?" + strconv.Itoa(n) },
		AnyOf: func(n int) string { return "IN (SELECT value FROM json_each(?" + strconv.Itoa(n) + "))" },
		Jobs:  Jobs{FailJob: "own"},
	})
	if got, want := d.Uploads.Uploads, `SELECT sha256, size, stored FROM uploads WHERE user_key = ?1 AND sha256 IN (SELECT value FROM json_each(?2))`; got != want {
		t.Errorf("Uploads:\n got %s\nwant %s", got, want)
	}
	if got, want := d.RequeueJob, `UPDATE jobs SET state = 'queued', run_at = ?2, lease = 0, error = ?3 WHERE id = ?1`; got != want {
		t.Errorf("RequeueJob:\n got %s\nwant %s", got, want)
	}
	if d.FailJob != "own" {
		t.Errorf("FailJob = %q: a dialect's own statement was replaced", d.FailJob)
	}
	if shared.Uploads.Uploads == d.Uploads.Uploads {
		t.Error("Shared rewrote the shared statements themselves")
	}
}
