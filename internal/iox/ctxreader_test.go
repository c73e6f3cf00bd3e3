package iox

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestContextReader: reads pass until ctx ends, then fail with its error.
func TestContextReader(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := ContextReader(ctx, strings.NewReader("abcdef"))
	b := make([]byte, 3)
	if n, err := r.Read(b); n != 3 || err != nil || string(b) != "abc" {
		t.Fatalf("%d %v %q", n, err, b)
	}
	cancel()
	if _, err := io.ReadAll(r); !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: %v", err)
	}
}
