package ui

// This file holds what the work page's book viewer needs: the vendored
// Mirador (static/vendor/mirador.min.js), mounted by static/viewer.js on
// the work's IIIF manifest, and the one relaxation of the pages'
// Content-Security-Policy it needs. Mirador's components (MUI on emotion,
// and a few libraries of their own) put their styles into <style> elements
// they create at run time; the pages' policy (style-src 'self') refuses
// those. A work page with a viewer therefore sends a fresh random nonce
// with each response, allows style elements carrying it (style-src 'self'
// 'nonce-…'), and gives it to viewer.js (the nonce attribute of its script
// element), which sets it on every <style> element the page's scripts
// create. Scripts stay 'self' only; style="" attributes stay refused;
// every other page keeps uiCSP as it is.

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// uiViewer is what a work page's viewer is mounted with.
type uiViewer struct {
	// Manifest is the address of the work's IIIF manifest.
	Manifest string
	// Canvas is the canvas to open at (the page ?page= names), "" for
	// the first.
	Canvas string
	// Nonce is the response's style nonce (see uiPage.StyleNonce).
	Nonce string
}

// newStyleNonce returns a random CSP nonce (128 bits, in URL-safe base64,
// which the CSP grammar allows and HTML attributes take as it is).
func newStyleNonce() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("ui: style nonce: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// pageCSP is the Content-Security-Policy of a page: uiCSP, with style
// elements carrying styleNonce allowed when it is set.
func pageCSP(styleNonce string) string {
	if styleNonce == "" {
		return uiCSP
	}
	return strings.Replace(uiCSP, "style-src 'self'", "style-src 'self' 'nonce-"+styleNonce+"'", 1)
}

// workViewer returns the viewer of a work page, or nil when none of the
// pages shown has an image to show (the manifest would have nothing to
// paint). page is the file set ?page= names, opened when it is one of
// items.
func (s *Handler) workViewer(p *uiPage, work shelfmark.ID, page shelfmark.ID, items []*uiWorkItem, files map[shelfmark.ID][]*shelfmark.Resource) (*uiViewer, error) {
	images := false
	for _, it := range items {
		if it.Work {
			continue
		}
		for _, f := range files[it.ID] {
			if pageImage(f.File) {
				images = true
				break
			}
		}
	}
	if !images {
		return nil, nil
	}
	nonce, err := newStyleNonce()
	if err != nil {
		return nil, err
	}
	p.StyleNonce = nonce
	v := &uiViewer{Manifest: p.Base + "/iiif/" + string(work) + "/manifest", Nonce: nonce}
	for _, it := range items {
		if page != "" && it.ID == page && !it.Work {
			v.Canvas = p.Base + "/iiif/" + string(work) + "/canvas/" + string(page)
			break
		}
	}
	return v, nil
}

// pageImage reports whether a file is an image a viewer can show: a
// thumbnail or access copy (always images), or an original whose media
// type is an image's.
func pageImage(f *shelfmark.File) bool {
	switch f.Use {
	case shelfmark.UseThumbnail, shelfmark.UseAccess:
		return true
	case shelfmark.UseOriginal, "":
		return strings.HasPrefix(kit.FileMediaType(f), "image/")
	}
	return false
}
