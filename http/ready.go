package http

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
)

// readyTimeout bounds each check of /readyz.
const readyTimeout = 2 * time.Second

// readyCheck is one line of /readyz: a component and what was found.
type readyCheck struct {
	name, state string
	failed      bool
}

// readyz answers 200 when the server can serve requests, with one line per
// check ("database: ok", …, then "ready"); otherwise 503 (EUNAVAILABLE)
// with the checks in the error's details. The checks:
//
//   - space: not while the last write failed for lack of space and a probe
//     finds none yet;
//   - database: the primary answers a read. When it does not but a read
//     replica is healthy, the server stays ready (the replica serves the
//     reads that tolerate lag; writes answer 503 until the primary is
//     back), and says so;
//   - replica: reported, never failing: a replica lagging beyond the bound
//     or down only sends reads to the primary;
//   - every component that implements shelfmark.ReadinessChecker: the
//     storage, and the content store, reported but never failing (an
//     S3 store is shared by every server: taking them all out of a load
//     balancer while it is away would stop the metadata, harvests and
//     pages too, which do not need it);
//   - the preservation copy (Options.Preservation), reported but never
//     failing: it catches up once its storage root is back.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	if err := s.space.ready(r.Context(), s.opts.Blobs, s.opts.Storage); err != nil {
		return err
	}
	var checks []readyCheck
	if s.opts.Storage != nil {
		checks = append(checks, s.databaseChecks(r.Context())...)
	}
	for _, c := range []struct {
		name string
		v    any
	}{{"content store", s.opts.Blobs}, {"storage", s.opts.Storage}, {"preservation copy", s.opts.Preservation}} {
		rc, ok := c.v.(shelfmark.ReadinessChecker)
		if !ok {
			continue
		}
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		err := rc.Ready(ctx)
		cancel()
		switch {
		case err != nil && c.name == "preservation copy":
			checks = append(checks, readyCheck{name: c.name, state: "behind: " + err.Error() + "; nothing is lost, it catches up once it can write"})
		case err != nil && c.name == "content store":
			// every server shares the store: failing them all would take
			// the metadata, harvests and pages down with the files
			checks = append(checks, readyCheck{name: c.name, state: "not available: " + err.Error() + "; uploads and downloads of files answer 503, everything else is served"})
		case err != nil:
			checks = append(checks, readyCheck{name: c.name, state: "not ready: " + err.Error(), failed: true})
		default:
			checks = append(checks, readyCheck{name: c.name, state: "ok"})
		}
	}
	var b strings.Builder
	var failed []string
	details := map[string]any{}
	for _, c := range checks {
		fmt.Fprintf(&b, "%s: %s\n", c.name, c.state)
		details[c.name] = c.state
		if c.failed {
			failed = append(failed, c.name)
		}
	}
	if len(failed) > 0 {
		return &shelfmark.Error{Code: shelfmark.EUNAVAILABLE, Message: "Not ready: " + strings.Join(failed, ", ") + " (see details).",
			Details: map[string]any{"checks": details}}
	}
	b.WriteString("ready\n")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, err := w.Write([]byte(b.String()))
	return err
}

// databaseChecks probes the primary and reports the replica.
func (s *Server) databaseChecks(ctx context.Context) []readyCheck {
	pctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	err := s.opts.Storage.View(pctx, func(tx shelfmark.ReadTx) error {
		_, err := tx.Resource(pctx, 0)
		return err
	})
	if s.replica.router == nil {
		if err != nil {
			return []readyCheck{{name: "database", state: "does not answer", failed: true}}
		}
		return []readyCheck{{name: "database", state: "ok"}}
	}
	st := s.replica.router.ReplicaStats()
	var db readyCheck
	switch {
	case err == nil:
		db = readyCheck{name: "database", state: "ok"}
	case st.Healthy:
		db = readyCheck{name: "database", state: "the primary does not answer; writes answer 503, reads that tolerate lag are served by the replica"}
	default:
		db = readyCheck{name: "database", state: "does not answer, nor does the replica", failed: true}
	}
	var rep string
	switch {
	case !st.Healthy:
		rep = fmt.Sprintf("not available (%s); reads go to the primary", st.Err)
	case !st.PrimaryReachable:
		rep = fmt.Sprintf("ok, replayed up to %s; its lag is unknown while the primary does not answer, and it serves the reads that tolerate lag", st.ReplayPosition)
	case !st.LagKnown:
		rep = "lag not measured yet; reads go to the primary"
	case st.Lag > st.MaxLag:
		rep = fmt.Sprintf("lagging: %s (%d bytes) behind, above the bound of %s; reads go to the primary until it catches up", st.Lag.Round(time.Millisecond), st.LagBytes, st.MaxLag)
	default:
		rep = fmt.Sprintf("ok, lag %s (%d bytes), bound %s", st.Lag.Round(time.Millisecond), st.LagBytes, st.MaxLag)
	}
	return []readyCheck{db, {name: "replica", state: rep}}
}
