package ui

// This file holds href, the one way the interface's templates build the
// address of a page with a query: html/template escapes a plain string
// placed after the "?" of an attribute as a URL component, so a value
// escaped before (url.QueryEscape) would be escaped twice and reach the
// server still encoded ("/login?next=%252Fworks…").

import (
	"fmt"
	"html/template"
	"net/url"
	"strings"
)

// href builds the address of a page of this site for a template: path is
// a path on this site as the template writes it (its variable segments
// escaped with the template function path), pairs are the names and
// values of its query, in order, each escaped once with url.QueryEscape.
// A value is printed as fmt.Sprint prints it (a string, an ID, a number);
// an empty value is kept ("name="). The result is a template.URL, which
// html/template only escapes for the attribute ("&" as "&amp;"), not as a
// URL again, so every value reaches the server as it was given. A path
// that is not one of this site (not starting with a single "/", or
// holding "?", "#", "\", a space or a control character) or a name
// missing its value is an error of the template, and the page is not
// rendered. Its cost is linear in the length of the result.
func href(path string, pairs ...any) (template.URL, error) {
	if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") || strings.ContainsAny(path, "?#\\") {
		return "", fmt.Errorf("href: %q is not a path on this site", path)
	}
	for i := 0; i < len(path); i++ {
		if path[i] <= ' ' || path[i] == 0x7f {
			return "", fmt.Errorf("href: the path %q holds a space or a control character", path)
		}
	}
	if len(pairs)%2 != 0 {
		return "", fmt.Errorf("href %s: the query name %v has no value", path, pairs[len(pairs)-1])
	}
	var b strings.Builder
	b.WriteString(path)
	for i := 0; i < len(pairs); i += 2 {
		name, ok := pairs[i].(string)
		if !ok || name == "" {
			return "", fmt.Errorf("href %s: query name %v is not a non-empty string", path, pairs[i])
		}
		if i == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(name))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(fmt.Sprint(pairs[i+1])))
	}
	return template.URL(b.String()), nil
}
