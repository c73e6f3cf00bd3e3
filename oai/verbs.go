package oai

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/shelfmark/shelfmark"
)

// handle answers a request whose arguments were read.
func (p *Provider) handle(ctx context.Context, res *response, a args) {
	if code, msg := checkArgs(a); code != "" {
		res.fail(nil, code, msg)
		return
	}
	res.a = &a
	verb, _ := a.get("verb")
	var err error
	switch verb {
	case "Identify":
		err = p.identify(ctx, res)
	case "ListMetadataFormats":
		err = p.listMetadataFormats(ctx, res, a)
	case "ListSets":
		err = p.listSets(ctx, res, a)
	case "GetRecord":
		err = p.getRecord(ctx, res, a)
	case "ListIdentifiers", "ListRecords":
		err = p.list(ctx, res, a, verb)
	}
	if err != nil {
		res.err = err
	}
}

func (p *Provider) identify(ctx context.Context, res *response) error {
	var earliest time.Time
	var sample int64
	err := p.store.View(ctx, func(tx shelfmark.ReadTx) error {
		_, e, ok, err := tx.OAIBounds(ctx)
		if !ok || err != nil {
			return err
		}
		earliest = e
		sample, err = p.sample(ctx, tx)
		return err
	})
	if err != nil {
		return err
	}
	if earliest.IsZero() {
		// nothing harvestable yet: every datestamp to come is later
		earliest = res.now.Truncate(time.Second)
	}
	b := append(res.body, "<Identify>\n"...)
	b = elem(b, "repositoryName", p.cfg.RepositoryName)
	b = elem(b, "baseURL", res.base)
	b = elem(b, "protocolVersion", "2.0")
	for _, e := range p.cfg.AdminEmails {
		b = elem(b, "adminEmail", e)
	}
	b = append(b, "<earliestDatestamp>"...)
	b = appendDatestamp(b, earliest)
	b = append(b, "</earliestDatestamp>\n"...)
	b = elem(b, "deletedRecord", "persistent")
	b = elem(b, "granularity", "YYYY-MM-DDThh:mm:ssZ")
	// oai-identifier requires a sampleIdentifier: the description waits
	// for a record to name
	if sample != 0 {
		b = append(b, `<description><oai-identifier xmlns="http://www.openarchives.org/OAI/2.0/oai-identifier" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.openarchives.org/OAI/2.0/oai-identifier http://www.openarchives.org/OAI/2.0/oai-identifier.xsd">`...)
		b = append(b, "<scheme>oai</scheme><repositoryIdentifier>"...)
		b = appendEscaped(b, p.cfg.Domain)
		b = append(b, "</repositoryIdentifier><delimiter>:</delimiter><sampleIdentifier>"...)
		b = appendEscaped(b, p.identifier(sample))
		b = append(b, "</sampleIdentifier></oai-identifier></description>\n"...)
	}
	res.body = append(b, "</Identify>\n"...)
	return nil
}

// sample returns the key of a record Identify can offer as its
// sampleIdentifier: the first live record of the first format that has
// one among its first rows (a tombstone when those are all deleted), or 0
// when the view holds none. It reads at most one short page per format.
func (p *Provider) sample(ctx context.Context, tx shelfmark.ReadTx) (int64, error) {
	var any int64
	for _, f := range p.formats.Formats() {
		recs, err := tx.OAIRecords(ctx, shelfmark.OAIList{Prefix: f.Prefix(), Max: math.MaxInt64, Limit: 10})
		if err != nil {
			return 0, err
		}
		for _, r := range recs {
			if !r.Deleted {
				return r.Key, nil
			}
			if any == 0 {
				any = r.Key
			}
		}
	}
	return any, nil
}

func (p *Provider) listMetadataFormats(ctx context.Context, res *response, a args) error {
	formats := p.formats.Formats()
	if id, ok := a.get("identifier"); ok {
		key, ok := p.parseIdentifier(id)
		if !ok {
			res.fail(res.a, errIDDoesNotExist, fmt.Sprintf("%q is not an identifier of this repository.", truncate(id, 80)))
			return nil
		}
		var rows []*shelfmark.OAIRecord
		err := p.store.View(ctx, func(tx shelfmark.ReadTx) (err error) {
			rows, err = tx.OAIRecordsOf(ctx, []int64{key})
			return err
		})
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			res.fail(res.a, errIDDoesNotExist, fmt.Sprintf("No item has the identifier %q.", truncate(id, 80)))
			return nil
		}
		has := map[string]bool{}
		for _, r := range rows {
			has[r.Prefix] = true
		}
		var fs []Format
		for _, f := range formats {
			if has[f.Prefix()] {
				fs = append(fs, f)
			}
		}
		if len(fs) == 0 {
			res.fail(res.a, errNoMetadataFormats, "The item has no metadata format this repository offers.")
			return nil
		}
		formats = fs
	}
	b := append(res.body, "<ListMetadataFormats>\n"...)
	for _, f := range formats {
		b = append(b, "<metadataFormat>"...)
		b = append(b, "<metadataPrefix>"...)
		b = appendEscaped(b, f.Prefix())
		b = append(b, "</metadataPrefix><schema>"...)
		b = appendEscaped(b, f.Schema())
		b = append(b, "</schema><metadataNamespace>"...)
		b = appendEscaped(b, f.Namespace())
		b = append(b, "</metadataNamespace></metadataFormat>\n"...)
	}
	res.body = append(b, "</ListMetadataFormats>\n"...)
	return nil
}

func (p *Provider) getRecord(ctx context.Context, res *response, a args) error {
	id, _ := a.get("identifier")
	prefix, _ := a.get("metadataPrefix")
	key, ok := p.parseIdentifier(id)
	if !ok {
		res.fail(res.a, errIDDoesNotExist, fmt.Sprintf("%q is not an identifier of this repository.", truncate(id, 80)))
		return nil
	}
	f := p.formats.Lookup(prefix)
	var rec *shelfmark.OAIRecord
	var any bool
	var specs map[int64]string
	err := p.store.View(ctx, func(tx shelfmark.ReadTx) error {
		if f != nil {
			var err error
			if rec, err = tx.OAIRecord(ctx, prefix, key); err != nil {
				return err
			}
		}
		if rec == nil {
			rows, err := tx.OAIRecordsOf(ctx, []int64{key})
			any = len(rows) > 0
			return err
		}
		var err error
		specs, err = setSpecs(ctx, tx, []*shelfmark.OAIRecord{rec})
		return err
	})
	if err != nil {
		return err
	}
	switch {
	case rec != nil:
		b := append(res.body, "<GetRecord>\n"...)
		b = res.appendRecord(b, rec, specs)
		res.body = append(b, "</GetRecord>\n"...)
	case !any:
		res.fail(res.a, errIDDoesNotExist, fmt.Sprintf("No item has the identifier %q.", truncate(id, 80)))
	case f == nil:
		res.fail(res.a, errCannotDisseminate, fmt.Sprintf("%q is not a metadata format of this repository (see ListMetadataFormats).", truncate(prefix, 40)))
	default:
		res.fail(res.a, errCannotDisseminate, fmt.Sprintf("The item has no %s record (see ListMetadataFormats with its identifier).", prefix))
	}
	return nil
}

// setSpecs returns the setSpecs of the sets the records name.
func setSpecs(ctx context.Context, tx shelfmark.ReadTx, recs []*shelfmark.OAIRecord) (map[int64]string, error) {
	var keys []int64
	seen := map[int64]bool{}
	for _, r := range recs {
		for _, k := range r.Sets {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	sets, err := tx.OAISetsByKey(ctx, keys)
	if err != nil {
		return nil, err
	}
	m := make(map[int64]string, len(sets))
	for _, s := range sets {
		m[s.Key] = s.Spec
	}
	return m, nil
}

// list answers ListIdentifiers and ListRecords: one page of the keyset walk
// over the view, with a token for the next.
func (p *Provider) list(ctx context.Context, res *response, a args, verb string) error {
	var t *token
	if text, ok := a.get("resumptionToken"); ok {
		key, err := p.tokenKey(ctx)
		if err != nil {
			return err
		}
		if t, err = decodeToken(text, key); err != nil || t.Verb != verb || p.formats.Lookup(t.Prefix) == nil {
			res.fail(res.a, errBadResumption, "The resumption token is not one this repository issued for "+verb+" (or it was altered): start the list again.")
			return nil
		}
	} else {
		prefix, _ := a.get("metadataPrefix")
		if p.formats.Lookup(prefix) == nil {
			res.fail(res.a, errCannotDisseminate, fmt.Sprintf("%q is not a metadata format of this repository (see ListMetadataFormats).", truncate(prefix, 40)))
			return nil
		}
		set, hasSet := a.get("set")
		if hasSet && !validSetSpec(set) {
			res.fail(res.a, errBadArgument, fmt.Sprintf("%q is not a setSpec.", truncate(set, 80)))
			return nil
		}
		w, msg := parseWindow(a)
		if msg != "" {
			res.fail(res.a, errBadArgument, msg)
			return nil
		}
		t = &token{Verb: verb, Prefix: prefix, Set: set, Total: -1, wnd: w, fresh: true}
	}
	return p.page(ctx, res, t)
}

// A list with until is closed when it opens: its end is the highest Seq
// with a datestamp up to until at that moment, carried in every token, so no
// later page can hold a record written after the first, whose datestamp may
// pass until (rows written later have datestamps no earlier than the first
// page's responseDate: the next incremental harvest, from that date, finds
// them). A list without until stays open at its end: records added during
// the harvest are part of it.

// page writes one page of the list t continues.
func (p *Provider) page(ctx context.Context, res *response, t *token) error {
	first := t.fresh
	var pg listPage
	read := func(ctx context.Context) error {
		pg = listPage{}
		return p.store.View(ctx, func(tx shelfmark.ReadTx) error { return p.readPage(ctx, tx, t, first, &pg) })
	}
	err := read(ctx)
	if _, replica := shelfmark.ReplicaReadFrom(ctx); err == nil && replica && pg.behind(t, p.cfg.PageSize) {
		// a read replica behind the view that gave the previous page:
		// read this page from the primary, or the list would end early
		err = read(shelfmark.WithoutReplicaRead(ctx))
	}
	if err != nil {
		return err
	}
	recs, specs, noSets, noSet := pg.recs, pg.specs, pg.noSets, pg.noSet
	switch {
	case noSets:
		res.fail(res.a, errNoSetHierarchy, "This repository has no sets (no public collections).")
		return nil
	case noSet:
		if first {
			res.fail(res.a, errNoRecordsMatch, fmt.Sprintf("No set has the setSpec %q (see ListSets).", truncate(t.Set, 80)))
		} else {
			res.fail(res.a, errBadResumption, "The set this list walks no longer exists: start again.")
		}
		return nil
	case len(recs) == 0 && first:
		res.fail(res.a, errNoRecordsMatch, "No records match the request.")
		return nil
	}
	more := len(recs) > p.cfg.PageSize
	seen := int64(0)
	if more {
		seen = recs[p.cfg.PageSize].Seq
		recs = recs[:p.cfg.PageSize]
	}
	size := 256
	for _, r := range recs {
		size += len(r.Payload) + 256 + 64*len(r.Sets)
	}
	b := append(slices.Grow(res.body, size), '<')
	b = append(b, t.Verb...)
	b = append(b, ">\n"...)
	for _, r := range recs {
		if t.Verb == "ListRecords" {
			b = res.appendRecord(b, r, specs)
		} else {
			b = res.appendHeader(b, r, specs)
		}
	}
	if !first || more {
		last := int64(0)
		if more {
			last = recs[len(recs)-1].Seq
		}
		var err error
		if b, err = p.appendNext(ctx, b, t, more, last, seen, len(recs)); err != nil {
			return err
		}
	}
	b = append(b, "</"...)
	b = append(b, t.Verb...)
	res.body = append(b, ">\n"...)
	return nil
}

// tally sets the completeListSize of a list on its first page, from the
// counts the view keeps (constant cost): when the list is a whole format, or
// the whole of a set without sets below it. A list that a from or until
// cuts, or a set with sets below it (whose rows may be in several of them),
// would need a count over the list: it gets none (completeListSize is
// optional).
func (p *Provider) tally(ctx context.Context, tx shelfmark.ReadTx, t *token, sets []int64) error {
	t.Total = -1
	if len(sets) > 1 {
		return nil
	}
	var set int64
	if len(sets) == 1 {
		set = sets[0]
	}
	c, err := tx.OAICount(ctx, t.Prefix, set)
	if err != nil || c.N == 0 {
		return err
	}
	if t.After < c.First && (t.Max == 0 || t.Max >= c.Last) {
		t.Total = c.N
	}
	return nil
}

// appendNext appends the resumptionToken element of a page that returned n
// items of the list t walks: a token after last when more follow, empty on
// the last page. seen is the Seq of the item the page's view holds after
// last (0 for lists of sets, ordered by key).
func (p *Provider) appendNext(ctx context.Context, b []byte, t *token, more bool, last, seen int64, n int) ([]byte, error) {
	text := ""
	if more {
		key, err := p.tokenKey(ctx)
		if err != nil {
			return b, err
		}
		next := *t
		next.After, next.Seen = last, seen
		next.Cursor = t.Cursor + int64(n)
		if next.Total >= 0 && next.Cursor >= next.Total {
			next.Total = next.Cursor + 1 // records were added since the count
		}
		text = next.encode(key)
	}
	return appendToken(b, text, t.Cursor, t.Total), nil
}

// listPage is what one View of a list page read.
type listPage struct {
	recs          []*shelfmark.OAIRecord
	specs         map[int64]string
	noSets, noSet bool
}

// behind reports whether the page, read after token t, comes from a view
// older than the one that issued t: it ends before the item that view saw
// next (t.Seen), which a later view holds too (an item changed since is
// there at a higher Seq), or it lacks the set the list walks. Only a view
// that is a prefix of an older state, such as a read replica that has not
// replayed as far, reads so.
func (pg *listPage) behind(t *token, pageSize int) bool {
	switch {
	case t.fresh:
		return false
	case pg.noSets || pg.noSet:
		return true // the set the previous page walked is not there yet
	case t.Seen == 0 || len(pg.recs) > pageSize:
		return false
	}
	return len(pg.recs) == 0 || pg.recs[len(pg.recs)-1].Seq < t.Seen
}

// readPage reads the page of the list t walks into pg, in tx.
func (p *Provider) readPage(ctx context.Context, tx shelfmark.ReadTx, t *token, first bool, pg *listPage) error {
	l := shelfmark.OAIList{Prefix: t.Prefix, After: t.After, Limit: p.cfg.PageSize + 1, Payload: t.Verb == "ListRecords"}
	if t.Set != "" {
		keys, err := tx.OAISetTree(ctx, t.Set)
		if err != nil {
			return err
		}
		if len(keys) == 0 {
			some, err := tx.OAISets(ctx, 0, 1)
			pg.noSets, pg.noSet = len(some) == 0, true
			return err
		}
		l.Sets = keys
	}
	if first {
		after, max, err := tx.OAISeqRange(ctx, t.Prefix, t.wnd.from, t.wnd.until)
		if err != nil {
			return err
		}
		t.After, l.After = after, after
		if !t.wnd.until.IsZero() { // closed at its end now (see above)
			if max == 0 {
				return nil
			}
			t.Max = max
		}
		if err := p.tally(ctx, tx, t, l.Sets); err != nil {
			return err
		}
	}
	// an open list ends wherever the view ends when the page is read
	l.Max = math.MaxInt64
	if t.Max > 0 {
		l.Max = t.Max
	}
	if l.After >= l.Max {
		return nil
	}
	var err error
	if pg.recs, err = tx.OAIRecords(ctx, l); err != nil {
		return err
	}
	pg.specs, err = setSpecs(ctx, tx, pg.recs)
	return err
}
