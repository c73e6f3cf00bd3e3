package iiif

// This file sends a manifest built for its request (never cached: a
// signed-in caller's, or one built while the cache follows changes) to a
// client that accepts gzip. Its ETag, a SHA-256 of its bytes, and its
// gzipped bytes are each a pass over the whole document (about 2 MB for a
// book of 1,200 pages with OCR): the hash is taken on a goroutine of its
// own while the body is compressed here, so on a machine of two or more
// cores the answer waits for the longer of the two, not their sum, and
// the compressed bytes then go out as they are (the server's compressing
// wrapper leaves a response with a Content-Encoding alone).

import (
	"bytes"
	"net/http"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// gzipAheadMin is the smallest document whose hash and compression are
// done side by side: below it the goroutine costs more than it saves.
const gzipAheadMin = 64 << 10

// gzipWriters are the gzip writers of built manifests, kept for the next
// (a writer holds some hundreds of kilobytes of tables).
type gzipWriters struct {
	writers sync.Pool // of *gzip.Writer
	bufs    sync.Pool // of *bytes.Buffer
}

// compress returns b gzipped at kit.GzipLevel, in a buffer to give back
// with done, or nil if it could not be.
func (g *gzipWriters) compress(b []byte) *bytes.Buffer {
	out, _ := g.bufs.Get().(*bytes.Buffer)
	if out == nil {
		out = new(bytes.Buffer)
	}
	out.Reset()
	zw, _ := g.writers.Get().(*gzip.Writer)
	if zw == nil {
		var err error
		if zw, err = gzip.NewWriterLevel(out, kit.GzipLevel); err != nil {
			g.bufs.Put(out)
			return nil
		}
	} else {
		zw.Reset(out)
	}
	_, err := zw.Write(b)
	if err == nil {
		err = zw.Close()
	}
	g.writers.Put(zw)
	if err != nil {
		g.bufs.Put(out)
		return nil
	}
	return out
}

// done keeps out for the next compression unless it grew past
// maxKeptBody.
func (g *gzipWriters) done(out *bytes.Buffer) {
	if out != nil && out.Cap() <= maxKeptBody {
		g.bufs.Put(out)
	}
}

// writeBuilt sends b, a manifest about res built for this request, as
// writeIIIF does: to a GET that accepts gzip, with b's ETag hashed beside
// its compression (see the top of this file).
func (s *Handler) writeBuilt(w http.ResponseWriter, r *http.Request, res *shelfmark.Resource, b []byte) error {
	if r.Method != http.MethodGet || len(b) < gzipAheadMin || !kit.AcceptsGzip(r) {
		return s.writeIIIF(w, r, res, b, time.Time{})
	}
	etag := make(chan string, 1)
	go func() { etag <- kit.BodyETag(b) }()
	z := s.gzips.compress(b)
	tag := <-etag
	if z == nil {
		return s.writeIIIFAs(w, r, res, b, tag, time.Time{}, nil)
	}
	err := s.writeIIIFAs(w, r, res, b, tag, time.Time{}, z.Bytes)
	s.gzips.done(z) // written (a writer keeps none of what it is given)
	return err
}
