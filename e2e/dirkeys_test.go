package e2e

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/shelfmark/shelfmark/ingest"
)

// dirKeys reads the directory tree at root and returns the source key of
// each of its works by the key an earlier version gave it ("dir:book001").
func dirKeys(t *testing.T, root string) map[string]string {
	t.Helper()
	src, err := ingest.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out := map[string]string{}
	for {
		it, err := src.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out[it.FormerKey] = it.Key
	}
}
