package oai

import (
	"sort"
	"strconv"
	"time"

	"github.com/shelfmark/shelfmark"
)

const responseOpen = `<?xml version="1.0" encoding="UTF-8"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.openarchives.org/OAI/2.0/ http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd">
`

// response is one OAI-PMH response being built. A page is built in memory
// (bounded by the page size) and sent with its length, so that a failure
// half-way gives a clean HTTP error instead of a truncated document.
type response struct {
	p    *Provider
	now  time.Time
	base string
	// a are the request's arguments when they were valid (echoed as the
	// request element's attributes), or nil.
	a *args
	// body is the verb's element, or the error elements.
	body []byte
	// failed is set once an OAI-PMH error was added.
	failed bool
	// err is an internal failure: the response is not sent.
	err error
}

// fail adds an OAI-PMH error. After badVerb and badArgument the request
// element carries no attributes, as the protocol says (a is ignored).
func (r *response) fail(a *args, code, msg string) {
	if code == errBadVerb || code == errBadArgument {
		a = nil
	}
	if !r.failed {
		r.body = r.body[:0]
	}
	r.failed = true
	r.a = a
	r.body = append(r.body, `<error code="`...)
	r.body = append(r.body, code...)
	r.body = append(r.body, `">`...)
	r.body = appendEscaped(r.body, msg)
	r.body = append(r.body, "</error>\n"...)
}

// head returns the document up to the verb's element (or the errors).
func (r *response) head() []byte {
	b := make([]byte, 0, 512)
	b = append(b, responseOpen...)
	b = append(b, "<responseDate>"...)
	b = appendDatestamp(b, r.now)
	b = append(b, "</responseDate>\n<request"...)
	if r.a != nil {
		names := make([]string, 0, len(r.a.values))
		for n := range r.a.values {
			if n != "verb" {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		names = append([]string{"verb"}, names...)
		for _, n := range names {
			b = append(b, ' ')
			b = append(b, n...)
			b = append(b, `="`...)
			b = appendEscaped(b, r.a.values[n])
			b = append(b, '"')
		}
	}
	b = append(b, '>')
	b = appendEscaped(b, r.base)
	return append(b, "</request>\n"...)
}

// responseClose ends every document.
const responseClose = "</OAI-PMH>\n"

// elem appends <name>text</name>.
func elem(b []byte, name, text string) []byte {
	b = append(b, '<')
	b = append(b, name...)
	b = append(b, '>')
	b = appendEscaped(b, text)
	b = append(b, "</"...)
	b = append(b, name...)
	return append(b, ">\n"...)
}

// appendHeader appends a record's header. specs maps collection keys to
// setSpecs; sets that are no longer public are left out.
func (r *response) appendHeader(b []byte, rec *shelfmark.OAIRecord, specs map[int64]string) []byte {
	if rec.Deleted {
		b = append(b, `<header status="deleted">`...)
	} else {
		b = append(b, "<header>"...)
	}
	b = append(b, "<identifier>"...)
	b = appendEscaped(b, r.p.identifier(rec.Key))
	b = append(b, "</identifier><datestamp>"...)
	b = appendDatestamp(b, rec.Datestamp)
	b = append(b, "</datestamp>"...)
	for _, k := range rec.Sets {
		if s, ok := specs[k]; ok {
			b = append(b, "<setSpec>"...)
			b = appendEscaped(b, s)
			b = append(b, "</setSpec>"...)
		}
	}
	return append(b, "</header>\n"...)
}

// appendRecord appends a whole record: header, and metadata unless deleted.
func (r *response) appendRecord(b []byte, rec *shelfmark.OAIRecord, specs map[int64]string) []byte {
	b = append(b, "<record>"...)
	b = r.appendHeader(b, rec, specs)
	if !rec.Deleted {
		b = append(b, "<metadata>"...)
		b = append(b, rec.Payload...)
		b = append(b, "</metadata>"...)
	}
	return append(b, "</record>\n"...)
}

// appendToken appends a resumptionToken element: with text when the list
// goes on, empty on its last page.
func appendToken(b []byte, text string, cursor, total int64) []byte {
	b = append(b, `<resumptionToken`...)
	if total >= 0 {
		b = append(b, ` completeListSize="`...)
		b = strconv.AppendInt(b, total, 10)
		b = append(b, '"')
	}
	b = append(b, ` cursor="`...)
	b = strconv.AppendInt(b, cursor, 10)
	b = append(b, `">`...)
	b = appendEscaped(b, text)
	return append(b, "</resumptionToken>\n"...)
}
