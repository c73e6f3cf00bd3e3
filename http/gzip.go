package http

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/klauspost/compress/gzhttp"

	"github.com/shelfmark/shelfmark/http/kit"
)

// Response compression. Clients that send Accept-Encoding: gzip get API
// and OAI-PMH responses gzipped: a harvest of XML records, or a page of
// JSON, shrinks to about a tenth on the wire. Compression uses
// klauspost/compress (gzhttp), several times faster than compress/gzip at
// the same level, at its fastest level: its ratio on XML and JSON is close
// to the default level's at a fraction of the CPU, and a harvest is bound by
// the server's CPU, not its link.
//
// Left as they are: responses below gzipMinSize (compression would not
// pay), responses that already carry a Content-Encoding or a Content-Range,
// and content types that are compressed already (images, video, audio,
// archives). File content (GET …/content, with its Range requests and
// digests of the stored bytes) is never wrapped. Every response through
// the wrapper says Vary: Accept-Encoding, so caches keep the two forms
// apart.

// gzipMinSize is the smallest body that is compressed, in bytes.
const gzipMinSize = 1024

// newGzip returns the wrapper that compresses a handler's responses.
func newGzip() func(http.Handler) http.Handler {
	wrap, err := gzhttp.NewWrapper(
		gzhttp.MinSize(gzipMinSize),
		gzhttp.CompressionLevel(kit.GzipLevel),
		gzhttp.EnableZstd(false), // gzip only: what every harvester speaks
	)
	if err != nil {
		// the options are constants: an error is a mistake here
		panic(fmt.Sprintf("http: gzip options: %v", err))
	}
	return func(h http.Handler) http.Handler {
		return wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(&varyWriter{ResponseWriter: w}, r)
		}))
	}
}

// varyWriter keeps Accept-Encoding in Vary when a handler sets Vary itself
// (content negotiation sets Vary: Accept), which would drop the value the
// gzip wrapper added before calling it.
type varyWriter struct {
	http.ResponseWriter
	done bool
}

func (w *varyWriter) vary() {
	if w.done {
		return
	}
	w.done = true
	h := w.Header()
	for _, v := range h.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), "Accept-Encoding") {
				return
			}
		}
	}
	h.Add("Vary", "Accept-Encoding")
}

func (w *varyWriter) WriteHeader(code int) {
	w.vary()
	w.ResponseWriter.WriteHeader(code)
}

func (w *varyWriter) Write(b []byte) (int, error) {
	w.vary()
	return w.ResponseWriter.Write(b)
}

// Flush sends what the handler wrote so far.
func (w *varyWriter) Flush() {
	w.vary()
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *varyWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Gzip wraps h so that its responses are gzipped for clients that accept
// gzip, as the Server's API and OAI-PMH responses are (for a handler served
// on its own, such as a benchmark's provider).
func Gzip(h http.Handler) http.Handler { return newGzip()(h) }

// compressed reports whether a route's responses go through the gzip
// wrapper: the API's, except file content.
func compressed(pattern string) bool {
	return strings.HasPrefix(pattern, "/api/v1/") && !strings.HasSuffix(pattern, "/content")
}
