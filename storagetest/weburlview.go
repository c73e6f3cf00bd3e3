package storagetest

import (
	"context"
	"reflect"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// testWebURLView: ReadTx.WebURLView reads a URL's row as WebURLsBySURT
// does, its domain's name, and its current capture as WebCaptureRows
// does, whatever the capture recorded of links; no capture for a URL
// without a current one or whose current one is gone; nil for a SURT the
// index does not know. ReadTx.WebLinkRows reads what WebInbound,
// WebURLRows and ResourceChain read for the same query.
func testWebURLView(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	s := e.store
	f := newWebCaptureFixture(t, s)
	// a current capture of each kind, each for a URL of its own
	current := map[int64]int64{}
	kinds := map[string]bool{}
	for _, c := range f.captures {
		kind := "no information"
		if c.HasLinks && len(c.Links) == 0 {
			kind = "no links"
		} else if c.HasLinks {
			kind = "links"
		}
		if _, taken := current[c.URL]; !taken && !kinds[kind] {
			current[c.URL], kinds[kind] = c.ID, true
		}
	}
	if len(kinds) != 3 {
		t.Fatalf("the fixture lacks a kind of capture: %v", kinds)
	}
	var gone int64 // a URL whose current capture has no row
	for _, su := range webFixtureSURTs {
		if u := f.urls[su]; current[u] == 0 && gone == 0 {
			gone, current[u] = u, 1<<40
		}
	}
	webUpdate(t, s, func(tx shelfmark.WriteTx) error { return tx.SetWebCurrent(ctx, current) })
	byID := map[int64]*shelfmark.CaptureRow{}
	for _, c := range f.captures {
		byID[c.ID] = c
	}
	webView(t, s, func(tx shelfmark.ReadTx) error {
		rows, err := tx.WebURLsBySURT(ctx, webFixtureSURTs)
		if err != nil {
			return err
		}
		for _, su := range webFixtureSURTs {
			v, err := tx.WebURLView(ctx, su)
			if err != nil {
				return err
			}
			if v == nil {
				t.Fatalf("WebURLView(%s): nil", su)
			}
			want := *rows[su]
			if v.WebURLRow != want {
				t.Errorf("WebURLView(%s): row %+v, want %+v", su, v.WebURLRow, want)
			}
			ds, err := tx.WebDomainRows(ctx, []int64{want.Domain})
			if err != nil {
				return err
			}
			if len(ds) != 1 || v.DomainName != ds[0].Name {
				t.Errorf("WebURLView(%s): domain %q, want %v", su, v.DomainName, ds)
			}
			switch c := byID[current[want.ID]]; {
			case c == nil && v.Capture != nil:
				t.Errorf("WebURLView(%s): capture %+v, want none (current %d)", su, v.Capture, current[want.ID])
			case c != nil && v.Capture == nil:
				t.Errorf("WebURLView(%s): no capture, want %d", su, c.ID)
			case c != nil:
				sameCapture(t, v.Capture, c)
				if !reflect.DeepEqual(v.Capture.Links, c.Links) && len(c.Links) > 0 {
					t.Errorf("WebURLView(%s): links %v, want %v", su, v.Capture.Links, c.Links)
				}
			}
		}
		if v, err := tx.WebURLView(ctx, "com,example)/never"); err != nil || v != nil {
			t.Errorf("WebURLView of an unknown SURT: %+v, %v", v, err)
		}
		return nil
	})
	if gone == 0 {
		t.Fatal("no URL was left for a current capture that is gone")
	}

	// WebLinkRows reads what WebInbound, WebURLRows and ResourceChain read
	a, b, c := f.urls[webFixtureSURTs[0]], f.urls[webFixtureSURTs[1]], f.urls[webFixtureSURTs[2]]
	file := int64(8803)
	update(t, e, func(tx shelfmark.WriteTx) error {
		if err := tx.AddWebLinks(ctx, []shelfmark.WebLink{{Dst: a, Src: b}, {Dst: a, Src: c}, {Dst: b, Src: c}}); err != nil {
			return err
		}
		return tx.InsertResources(ctx, []*shelfmark.ResourceRow{chainRow(8801, 0, shelfmark.KindWork),
			chainRow(8802, 8801, shelfmark.KindFileSet), chainRow(file, 8802, shelfmark.KindFile)})
	})
	webView(t, s, func(tx shelfmark.ReadTx) error {
		for _, q := range []shelfmark.WebLinkRowsQuery{
			{Dst: a, InboundLimit: 10, Outbound: []int64{c, b, 1 << 40}, File: file},
			{Dst: a, InboundAfter: b, InboundLimit: 1, Outbound: []int64{a}, File: 1 << 40},
			{Dst: a, InboundLimit: 1},
			{Dst: 1 << 40, InboundLimit: 10},
		} {
			got, err := tx.WebLinkRows(ctx, q)
			if err != nil {
				return err
			}
			in, err := tx.WebInbound(ctx, q.Dst, q.InboundAfter, q.InboundLimit)
			if err != nil {
				return err
			}
			var out []*shelfmark.WebURLRow
			if len(q.Outbound) > 0 {
				if out, err = tx.WebURLRows(ctx, q.Outbound); err != nil {
					return err
				}
			}
			var chain []*shelfmark.ResourceRow
			if q.File != 0 {
				if chain, err = tx.ResourceChain(ctx, q.File, shelfmark.MaxChain); err != nil {
					return err
				}
			}
			byID := func(rows []*shelfmark.WebURLRow) map[int64]shelfmark.WebURLRow {
				m := map[int64]shelfmark.WebURLRow{}
				for _, r := range rows {
					m[r.ID] = *r
				}
				return m
			}
			if !reflect.DeepEqual(got.Inbound, in) || !reflect.DeepEqual(byID(got.Outbound), byID(out)) || !reflect.DeepEqual(got.FileChain, chain) {
				t.Errorf("WebLinkRows(%+v):\n got %v %v %v\nwant %v %v %v", q, got.Inbound, got.Outbound, got.FileChain, in, out, chain)
			}
		}
		return nil
	})
}
