package shelfmark_test

import (
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// TestResourceVisibilityAt: a resource's answer is read by the policy's
// rule: a running embargo and an ended lease make it private, and the
// dates end exactly at their instant.
func TestResourceVisibilityAt(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	before, after := now.Add(-time.Second), now.Add(time.Second)
	for _, c := range []struct {
		res  shelfmark.Resource
		want shelfmark.Visibility
	}{
		{shelfmark.Resource{Visibility: shelfmark.Public}, shelfmark.Public},
		{shelfmark.Resource{Visibility: shelfmark.Authenticated}, shelfmark.Authenticated},
		{shelfmark.Resource{Visibility: shelfmark.Public, Embargo: &after}, shelfmark.Private},
		{shelfmark.Resource{Visibility: shelfmark.Public, Embargo: &now}, shelfmark.Public},
		{shelfmark.Resource{Visibility: shelfmark.Public, Embargo: &before}, shelfmark.Public},
		{shelfmark.Resource{Visibility: shelfmark.Public, Lease: &after}, shelfmark.Public},
		{shelfmark.Resource{Visibility: shelfmark.Public, Lease: &now}, shelfmark.Private},
		{shelfmark.Resource{Visibility: shelfmark.Authenticated, Lease: &before}, shelfmark.Private},
		{shelfmark.Resource{Visibility: "secret"}, shelfmark.Private},
	} {
		if got := c.res.VisibilityAt(now); got != c.want {
			t.Errorf("visibility %q, embargo %v, lease %v: %q, want %q", c.res.Visibility, c.res.Embargo, c.res.Lease, got, c.want)
		}
	}
}
