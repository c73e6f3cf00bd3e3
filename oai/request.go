package oai

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// The error codes of OAI-PMH 2.0 (section 3.6).
const (
	errBadArgument       = "badArgument"
	errBadResumption     = "badResumptionToken"
	errBadVerb           = "badVerb"
	errCannotDisseminate = "cannotDisseminateFormat"
	errIDDoesNotExist    = "idDoesNotExist"
	errNoRecordsMatch    = "noRecordsMatch"
	errNoMetadataFormats = "noMetadataFormats"
	errNoSetHierarchy    = "noSetHierarchy"
)

// maxArgsBytes bounds a request's arguments (query or POST body).
const maxArgsBytes = 64 << 10

// args are a request's arguments, each given once.
type args struct {
	values map[string]string
	// repeated names an argument given more than once ("" when none).
	repeated string
}

func (a args) get(name string) (string, bool) {
	v, ok := a.values[name]
	return v, ok
}

// readArgs reads the arguments of a GET (query string) or POST
// (application/x-www-form-urlencoded body) request.
func readArgs(r *http.Request) (args, error) {
	raw := r.URL.RawQuery
	if r.Method == http.MethodPost {
		ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || ct != "application/x-www-form-urlencoded" {
			return args{}, errors.New("a POST request must send its arguments as application/x-www-form-urlencoded")
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxArgsBytes+1))
		if err != nil {
			return args{}, fmt.Errorf("reading the request body: %v", err)
		}
		if len(body) > maxArgsBytes {
			return args{}, fmt.Errorf("the arguments are longer than %d bytes", maxArgsBytes)
		}
		if raw != "" && len(body) > 0 {
			raw += "&"
		}
		raw += string(body)
	}
	if len(raw) > maxArgsBytes {
		return args{}, fmt.Errorf("the arguments are longer than %d bytes", maxArgsBytes)
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return args{}, fmt.Errorf("the arguments are not well-formed: %v", err)
	}
	a := args{values: make(map[string]string, len(q))}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		vs := q[name]
		if len(vs) > 1 && (a.repeated == "" || name == "verb") {
			a.repeated = name
		}
		a.values[name] = vs[0]
	}
	return a, nil
}

// verbArgs lists each verb's arguments: required ones, optional ones, and
// whether it takes a resumptionToken (which must then come alone).
var verbArgs = map[string]struct {
	required, optional []string
	token              bool
}{
	"Identify":            {},
	"ListMetadataFormats": {optional: []string{"identifier"}},
	"ListSets":            {token: true},
	"GetRecord":           {required: []string{"identifier", "metadataPrefix"}},
	"ListIdentifiers":     {required: []string{"metadataPrefix"}, optional: []string{"from", "until", "set"}, token: true},
	"ListRecords":         {required: []string{"metadataPrefix"}, optional: []string{"from", "until", "set"}, token: true},
}

// checkArgs returns the error code and message for a request whose verb or
// arguments are wrong, or "" when they are right.
func checkArgs(a args) (code, msg string) {
	verb, ok := a.get("verb")
	if !ok {
		return errBadVerb, "The request has no verb argument."
	}
	if a.repeated == "verb" {
		return errBadVerb, "The verb argument is repeated."
	}
	spec, ok := verbArgs[verb]
	if !ok {
		return errBadVerb, fmt.Sprintf("%q is not an OAI-PMH verb.", truncate(verb, 40))
	}
	if a.repeated != "" {
		return errBadArgument, fmt.Sprintf("The argument %q is repeated.", truncate(a.repeated, 40))
	}
	legal := map[string]bool{"verb": true}
	for _, n := range spec.required {
		legal[n] = true
	}
	for _, n := range spec.optional {
		legal[n] = true
	}
	if spec.token {
		legal["resumptionToken"] = true
	}
	names := make([]string, 0, len(a.values))
	for n := range a.values {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !legal[n] {
			return errBadArgument, fmt.Sprintf("%s does not take the argument %q.", verb, truncate(n, 40))
		}
	}
	if _, ok := a.get("resumptionToken"); ok {
		if len(a.values) > 2 {
			return errBadArgument, "resumptionToken is an exclusive argument: send it with the verb only."
		}
		return "", ""
	}
	for _, n := range spec.required {
		if _, ok := a.get(n); !ok {
			return errBadArgument, fmt.Sprintf("%s needs the argument %s.", verb, n)
		}
	}
	return "", ""
}

// window is a from/until pair; zero times are open sides.
type window struct {
	from, until time.Time
}

// parseWindow reads from and until at either granularity the repository
// supports (a day or a second, UTC); both must use the same one. A day
// from starts at its first second, a day until ends with its last.
func parseWindow(a args) (window, string) {
	var w window
	fromS, hasFrom := a.get("from")
	untilS, hasUntil := a.get("until")
	var fromDay, untilDay bool
	var err error
	if hasFrom {
		if w.from, fromDay, err = parseDatestamp(fromS); err != nil {
			return w, fmt.Sprintf("from: %v.", err)
		}
	}
	if hasUntil {
		if w.until, untilDay, err = parseDatestamp(untilS); err != nil {
			return w, fmt.Sprintf("until: %v.", err)
		}
		if untilDay {
			w.until = w.until.Add(24*time.Hour - time.Second)
		}
	}
	if hasFrom && hasUntil {
		if fromDay != untilDay {
			return w, "from and until must have the same granularity."
		}
		if w.from.After(w.until) {
			return w, "from is later than until."
		}
	}
	return w, ""
}

// parseDatestamp parses YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ.
func parseDatestamp(s string) (t time.Time, day bool, err error) {
	if len(s) == len("2006-01-02") {
		t, err = time.Parse("2006-01-02", s)
		if err == nil && t.Year() >= 1 {
			return t, true, nil
		}
	} else if len(s) == len(datestampLayout) {
		t, err = time.Parse(datestampLayout, s)
		if err == nil && t.Year() >= 1 {
			return t, false, nil
		}
	}
	return time.Time{}, false, fmt.Errorf("%q is not a date (YYYY-MM-DD) or a UTC time (YYYY-MM-DDThh:mm:ssZ)", truncate(s, 40))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// validSetSpec reports whether s matches setSpec's pattern in OAI-PMH.xsd.
func validSetSpec(s string) bool {
	if s == "" {
		return false
	}
	for _, part := range strings.Split(s, ":") {
		if part == "" {
			return false
		}
		for i := 0; i < len(part); i++ {
			c := part[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0) {
				return false
			}
		}
	}
	return true
}
