package oai

import (
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// TestPublic: a work is in the OAI-PMH view while it is live and its
// effective access (its own, or narrower from what holds it) is public,
// past its embargo and before the end of its lease.
func TestPublic(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { v := now.Add(d); return &v }
	for _, c := range []struct {
		name string
		row  shelfmark.ResourceRow
		want bool
	}{
		{"public", shelfmark.ResourceRow{Visibility: shelfmark.Public}, true},
		{"private", shelfmark.ResourceRow{Visibility: shelfmark.Private}, false},
		{"authenticated", shelfmark.ResourceRow{Visibility: shelfmark.Authenticated}, false},
		{"deleted", shelfmark.ResourceRow{Visibility: shelfmark.Public, Deleted: at(-time.Hour)}, false},
		{"under embargo", shelfmark.ResourceRow{Visibility: shelfmark.Public, Embargo: at(time.Hour)}, false},
		{"embargo ends now", shelfmark.ResourceRow{Visibility: shelfmark.Public, Embargo: at(0)}, true},
		{"lease running", shelfmark.ResourceRow{Visibility: shelfmark.Public, Lease: at(time.Hour)}, true},
		{"lease ends now", shelfmark.ResourceRow{Visibility: shelfmark.Public, Lease: at(0)}, false},
		{"lease ended", shelfmark.ResourceRow{Visibility: shelfmark.Public, Lease: at(-time.Hour)}, false},
		{"embargo over, lease running", shelfmark.ResourceRow{Visibility: shelfmark.Public, Embargo: at(-time.Hour), Lease: at(time.Hour)}, true},
	} {
		c.row.Effective = c.row.Own() // a work of its own
		if got := public(&c.row, now); got != c.want {
			t.Errorf("%s: public %v, want %v", c.name, got, c.want)
		}
	}
	// a public work held by a hidden one is as hidden
	for _, c := range []struct {
		name string
		eff  shelfmark.Access
		want bool
	}{
		{"held by a private work", shelfmark.Access{Visibility: shelfmark.Private}, false},
		{"held by an embargoed work", shelfmark.Access{Visibility: shelfmark.Public, Embargo: at(time.Hour)}, false},
		{"held by a work whose embargo ended", shelfmark.Access{Visibility: shelfmark.Public, Embargo: at(-time.Hour)}, true},
		{"held by a work whose lease ended", shelfmark.Access{Visibility: shelfmark.Public, Lease: at(-time.Hour)}, false},
	} {
		row := shelfmark.ResourceRow{Visibility: shelfmark.Public, Effective: c.eff}
		if got := public(&row, now); got != c.want {
			t.Errorf("%s: public %v, want %v", c.name, got, c.want)
		}
	}
}
