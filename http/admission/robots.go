package admission

import (
	_ "embed"
	"regexp"
	"strings"
	"sync"
)

// counterRobots is the COUNTER robots list (the patterns of user agents
// of robots and crawlers that COUNTER reports leave out), version of
// 2024-04-22 (github.com/atmire/COUNTER-Robots, generated/
// COUNTER_Robots_list.txt, MIT licence; see COUNTER_ROBOTS_LICENSE): one
// regular expression a line, matched without regard to case.
//
//go:embed counter_robots.txt
var counterRobots string

// Robots tells robots by their user agent: a user agent that one of the
// COUNTER list's patterns matches (the empty one among them). The
// patterns are one compiled alternation (RE2: linear in the user
// agent's length); the answers for the last maxRobotCache user agents
// seen are kept, so a crawler's repeated requests cost a map lookup.
type Robots struct {
	re    *regexp.Regexp
	mu    sync.Mutex
	cache map[string]bool
}

// maxRobotCache bounds the user agents whose answers Robots keeps (the
// cache is emptied when full) and maxUserAgent the length of one it
// reads (a longer one is judged by its beginning).
const (
	maxRobotCache = 4096
	maxUserAgent  = 512
)

// NewRobots compiles the COUNTER list, with extra patterns (regular
// expressions, without regard to case) added.
func NewRobots(extra ...string) (*Robots, error) {
	var pats []string
	for _, l := range strings.Split(counterRobots, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			pats = append(pats, "(?:"+l+")")
		}
	}
	for _, l := range extra {
		if l = strings.TrimSpace(l); l != "" {
			if _, err := regexp.Compile(l); err != nil {
				return nil, err
			}
			pats = append(pats, "(?:"+l+")")
		}
	}
	re, err := regexp.Compile("(?i)" + strings.Join(pats, "|"))
	if err != nil {
		return nil, err
	}
	return &Robots{re: re, cache: map[string]bool{}}, nil
}

// Is reports whether ua is a robot's user agent.
func (r *Robots) Is(ua string) bool {
	if len(ua) > maxUserAgent {
		ua = ua[:maxUserAgent]
	}
	r.mu.Lock()
	v, ok := r.cache[ua]
	r.mu.Unlock()
	if ok {
		return v
	}
	v = r.re.MatchString(ua)
	r.mu.Lock()
	if len(r.cache) >= maxRobotCache {
		clear(r.cache)
	}
	r.cache[ua] = v
	r.mu.Unlock()
	return v
}
