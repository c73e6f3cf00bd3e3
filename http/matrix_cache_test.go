package http

import (
	"fmt"
	"strings"
)

// sameForEveryone are the routes whose answers are the same whoever asks
// (the static files, the sitemaps of public works, robots.txt): a shared
// cache may keep them even when a signed-in caller asked.
var sameForEveryone = map[string]bool{
	"GET /static/{file...}": true,
	"GET /sitemap.xml":      true,
	"GET /sitemaps/{file}":  true,
	"GET /robots.txt":       true,
}

// cacheLeak checks, for every cell of the authorization matrix, that an
// answer built for a signed-in caller never lets a shared cache keep it
// (no "public" in Cache-Control), unless the route is the same for
// everyone; an anonymous caller sees public things only, so any answer
// to it may be public. A new route is checked as soon as it has its row.
func cacheLeak(op string, w *who, r *response) string {
	if w.token == "" || r.Status >= 300 || sameForEveryone[op] {
		return ""
	}
	for _, cc := range r.Header.Values("Cache-Control") {
		for _, d := range strings.Split(cc, ",") {
			if strings.EqualFold(strings.TrimSpace(d), "public") {
				return fmt.Sprintf("Cache-Control %q on an answer to a signed-in caller", cc)
			}
		}
	}
	return ""
}
