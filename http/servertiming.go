package http

import (
	"fmt"
	"io"
	"net/http"
	"time"
)

// timingWriter adds a Server-Timing header to an admitted request's
// answer: how long it waited for admission ("admit") and how long the
// handler took from its admission to the answer's header ("app"), in
// milliseconds. A client that measures more than their sum knows the
// rest was spent outside the handler (in the network, the connection's
// queue or the processor's run queue); an operator reads the same split
// in the browser's developer tools. It costs one header and no state.
type timingWriter struct {
	http.ResponseWriter
	now           func() time.Time
	waited        time.Duration
	admitted      time.Time
	headerWritten bool
}

// newTimingWriter wraps w for a request admitted at admitted after
// waiting waited.
func newTimingWriter(w http.ResponseWriter, now func() time.Time, admitted time.Time, waited time.Duration) *timingWriter {
	return &timingWriter{ResponseWriter: w, now: now, waited: waited, admitted: admitted}
}

// serverTiming is the Server-Timing value of a wait and a handler's time.
func serverTiming(waited, app time.Duration) string {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return fmt.Sprintf("admit;dur=%.3f, app;dur=%.3f", ms(waited), ms(app))
}

func (t *timingWriter) stamp() {
	if t.headerWritten {
		return
	}
	t.headerWritten = true
	t.Header().Set("Server-Timing", serverTiming(t.waited, t.now().Sub(t.admitted)))
}

// WriteHeader implements http.ResponseWriter.
func (t *timingWriter) WriteHeader(code int) {
	if code >= 200 || code == http.StatusSwitchingProtocols {
		t.stamp() // an informational header (103) leaves the final one to come
	}
	t.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (t *timingWriter) Write(b []byte) (int, error) {
	t.stamp()
	return t.ResponseWriter.Write(b)
}

// ReadFrom keeps the underlying writer's sendfile path for files.
func (t *timingWriter) ReadFrom(r io.Reader) (int64, error) {
	t.stamp()
	if rf, ok := t.ResponseWriter.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(t.ResponseWriter, r)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (t *timingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
