package admission

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Settings are the budgets of admission. Zero values take the defaults
// of Defaults; a class missing from a map keeps its default.
type Settings struct {
	// Off admits every request at once (no budget, no queue, no
	// refusal).
	Off bool
	// Budgets are the requests of a class served at once for the
	// signed-in, and for anonymous callers (each group has its own);
	// robots get half of the anonymous budget.
	Budgets map[Class]int
	// Shares are how many of a budget's requests one client may run at
	// once.
	Shares map[Class]int
	// Rates are the requests of a class an anonymous client may start a
	// second, with Bursts at once after a pause; robots get half. 0: no
	// rate share. Signed-in callers have none.
	Rates  map[Class]float64
	Bursts map[Class]float64
	// Expensive is how many requests of the expensive classes (search,
	// facet, book_search, pdf) anonymous callers may run at once all
	// together, beside each class's budget; robots get half. It keeps a
	// storm from many addresses, each within its shares, from taking
	// every processor: the rest stay for pages and the signed-in. Of it
	// (as of every anonymous budget of 2 or more) one slot is kept for
	// light clients (pool.go).
	Expensive int
	// QueueWait is how long a request within its client's share waits
	// for a slot of a class whose budget is all in use before it is
	// refused with 503 (default 2 s).
	QueueWait time.Duration
	// ShareWait is how long a request of a client past its share (of
	// concurrency or of rate) waits for its share before it is refused
	// with 429 (default 1 s). A refusal past the rate share comes after
	// this wait too, so a client that asks again at once cannot make
	// the server answer refusals as fast as it can send.
	ShareWait time.Duration
	// MaxWaiting bounds the queue of each class and group (default 256
	// per slot of its budget, at least 1,024); MaxHeld the requests held
	// before a refusal across all (default 16,384): past either a
	// request is refused at once.
	MaxWaiting, MaxHeld int
	// MaxClients bounds the clients whose rate each class and group
	// tracks (default 65,536).
	MaxClients int
}

// Defaults returns the settings for a machine of cores processors: the
// budgets of the expensive classes scale with the cores, so a storm of
// them can keep at most the processors busy and leave the cheap pages
// and signed-in callers room; the rates let a person browse, search and
// read freely (a search a second, sustained, after ten at once) and hold a crawler to the
// pace of a polite one.
func Defaults(cores int) Settings {
	cores = max(cores, 1)
	return Settings{
		Budgets: map[Class]int{
			Page: 8 * cores, Image: 4 * cores, File: 64, Search: 2 * cores, Facet: 2 * cores,
			BookSearch: 2 * cores, PDF: max(1, cores/2), Harvest: 2 * cores, Write: 16 * cores,
		},
		Shares: map[Class]int{
			Page: max(2, 2*cores), Image: max(4, 2*cores), File: 8, Search: max(1, cores/2), Facet: max(1, cores/2),
			BookSearch: max(1, cores/2), PDF: 1, Harvest: max(1, cores/2), Write: 16 * cores,
		},
		Rates: map[Class]float64{
			Page: 10, Image: 100, File: 10, Search: 1, Facet: 1, BookSearch: 2, PDF: 0.1, Harvest: 5, Write: 2,
		},
		Bursts: map[Class]float64{
			Page: 60, Image: 400, File: 60, Search: 10, Facet: 10, BookSearch: 20, PDF: 3, Harvest: 20, Write: 20,
		},
		Expensive:  max(1, cores/2) + 1,
		QueueWait:  2 * time.Second,
		ShareWait:  time.Second,
		MaxWaiting: 0,
		MaxHeld:    16384,
		MaxClients: 65536,
	}
}

// merge fills what s leaves unset from d.
func (s Settings) merge(d Settings) Settings {
	out := d
	out.Off = s.Off
	out.Budgets = mergeMap(d.Budgets, s.Budgets)
	out.Shares = mergeMap(d.Shares, s.Shares)
	out.Rates = mergeMap(d.Rates, s.Rates)
	out.Bursts = mergeMap(d.Bursts, s.Bursts)
	if s.Expensive > 0 {
		out.Expensive = s.Expensive
	}
	if s.QueueWait > 0 {
		out.QueueWait = s.QueueWait
	}
	if s.ShareWait > 0 {
		out.ShareWait = s.ShareWait
	}
	if s.MaxWaiting > 0 {
		out.MaxWaiting = s.MaxWaiting
	}
	if s.MaxHeld > 0 {
		out.MaxHeld = s.MaxHeld
	}
	if s.MaxClients > 0 {
		out.MaxClients = s.MaxClients
	}
	return out
}

func mergeMap[V any](def, set map[Class]V) map[Class]V {
	out := make(map[Class]V, len(def))
	for k, v := range def {
		out[k] = v
	}
	for k, v := range set {
		out[k] = v
	}
	return out
}

// ParseAssignments reads settings of the form CLASS=VALUE (for example
// "search=4"), each value read by parse, into m.
func ParseAssignments[V any](values []string, m map[Class]V, parse func(string) (V, error)) error {
	for _, a := range values {
		for _, part := range strings.Split(a, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			name, val, ok := strings.Cut(part, "=")
			if !ok {
				return fmt.Errorf("%q is not CLASS=VALUE", part)
			}
			c, err := ParseClass(strings.TrimSpace(name))
			if err != nil {
				return err
			}
			if c == Cheap {
				return fmt.Errorf("cheap requests have no budget")
			}
			v, err := parse(strings.TrimSpace(val))
			if err != nil {
				return fmt.Errorf("%s: %w", part, err)
			}
			m[c] = v
		}
	}
	return nil
}

// PositiveInt reads a count of at least 1, for ParseAssignments.
func PositiveInt(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is not a whole number of at least 1", s)
	}
	return n, nil
}

// NonNegativeFloat reads a rate (0 for none), for ParseAssignments.
func NonNegativeFloat(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f != f {
		return 0, fmt.Errorf("%q is not a number of 0 or more", s)
	}
	return f, nil
}
