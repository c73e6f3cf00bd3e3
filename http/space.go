package http

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/shelfmark/shelfmark"
)

// spaceWatch remembers that a write failed for lack of space
// (ESTORAGEFULL), so that /readyz reports the server not ready, and a
// load balancer sends writes elsewhere, until space returns: until a write
// succeeds, or a probe of the stores (shelfmark.SpaceProber) finds room
// again. The probe matters: a server taken out of rotation gets no writes
// to tell it.
type spaceWatch struct {
	full atomic.Bool
}

// observe notes the outcome of a request: a lack of space sets the flag, a
// write that succeeded clears it.
func (w *spaceWatch) observe(r *http.Request, err error) {
	switch {
	case shelfmark.ErrorCode(err) == shelfmark.ESTORAGEFULL:
		w.full.Store(true)
	case err == nil && r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions:
		w.full.Store(false)
	}
}

// ready returns nil unless the last write failed for lack of space and a
// probe of every store that can be probed still finds none: then
// EUNAVAILABLE, which /readyz answers 503.
func (w *spaceWatch) ready(ctx context.Context, stores ...any) error {
	if !w.full.Load() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for _, s := range stores {
		p, ok := s.(shelfmark.SpaceProber)
		if !ok {
			continue
		}
		if err := p.ProbeSpace(ctx); err != nil {
			return &shelfmark.Error{Code: shelfmark.EUNAVAILABLE,
				Message: "Storage full: a write failed for lack of space, and there is still none; the server is ready again once space is freed."}
		}
	}
	w.full.Store(false)
	return nil
}
