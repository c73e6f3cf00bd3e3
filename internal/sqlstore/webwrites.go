package sqlstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/shelfmark/shelfmark"
)

// WebWrites is a dialect's statements of the web index writes of WriteTx.
// Their arguments are those named, in that order.
type WebWrites struct {
	PutWebFile        string // WebFileCols; replaces the row of the file
	DeleteWebCaptures string // ids
	// InsertWebURLs inserts the URLs of the table expression v (surt,
	// url, domain) that are not there yet and returns id, surt, domain of
	// each it inserted; InsertWebURLCounts, when the dialect has it, then
	// adds their rows of web_url_counts from v (id, domain). A dialect
	// that writes those rows in InsertWebURLs leaves it nil.
	InsertWebURLs, InsertWebURLCounts func(v string) string
}

// intCols are columns of integers, by name.
func intCols(names ...string) []Col {
	cols := make([]Col, len(names))
	for i, n := range names {
		cols[i] = Col{n, Int64}
	}
	return cols
}

// pairs are the rows (a[i], b[i]) of the columns named.
func pairs(x, y string, a, b []int64) Rows {
	return Rows{Cols: intCols(x, y), N: len(a), Row: func(i int, v []any) { v[0], v[1] = a[i], b[i] }}
}

// PutWebFile inserts or replaces a file's state in one statement.
func (w *WriteTx) PutWebFile(ctx context.Context, f *shelfmark.WebFileRow) error {
	if _, err := w.q.Exec(ctx, w.d.PutWebFile, f.File, f.Work, f.Offset, f.Records, f.Errors, f.Done, f.Removed); err != nil {
		return fmt.Errorf("%sput web file %d: %w", w.d.Prefix, f.File, err)
	}
	return nil
}

// DeleteWebCaptures removes captures in one statement, in id order.
func (w *WriteTx) DeleteWebCaptures(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	ids = slices.Sorted(slices.Values(ids))
	if _, err := w.q.Exec(ctx, w.d.DeleteWebCaptures, w.d.Int64s(ids)); err != nil {
		return fmt.Errorf("%sdelete %d web captures: %w", w.d.Prefix, len(ids), err)
	}
	return nil
}

// SetWebCurrent sets the current capture of URLs in one statement, in id
// order.
func (w *WriteTx) SetWebCurrent(ctx context.Context, current map[int64]int64) error {
	if len(current) == 0 {
		return nil
	}
	keys, vals := SortedPairs(current, false)
	if _, err := w.execFrom(ctx, pairs("id", "current", keys, vals), func(v string) string {
		return `UPDATE web_urls SET current = v.current FROM ` + v + ` WHERE web_urls.id = v.id`
	}); err != nil {
		return fmt.Errorf("%sset the current captures of %d web urls: %w", w.d.Prefix, len(keys), err)
	}
	return nil
}

// linkRows are links sorted by (dst, src), the order of the web_links
// key, as rows of dst, src.
func linkRows(links []shelfmark.WebLink) Rows {
	links = SortLinks(links)
	return Rows{Cols: intCols("dst", "src"), N: len(links), Row: func(i int, v []any) { v[0], v[1] = links[i].Dst, links[i].Src }}
}

// DeleteWebLinks removes links in one statement, in key order.
func (w *WriteTx) DeleteWebLinks(ctx context.Context, links []shelfmark.WebLink) error {
	if len(links) == 0 {
		return nil
	}
	if _, err := w.execFrom(ctx, linkRows(links), func(v string) string {
		return `DELETE FROM web_links WHERE (dst, src) IN (SELECT dst, src FROM ` + v + `)`
	}); err != nil {
		return fmt.Errorf("%sdelete %d web links: %w", w.d.Prefix, len(links), err)
	}
	return nil
}

// AddWebCounts adds the deltas in id order: one statement for the URLs,
// one for the domains. Zero deltas are left out.
func (w *WriteTx) AddWebCounts(ctx context.Context, urlInbound, domainInbound, domainURLs map[int64]int64) error {
	if keys, vals := SortedPairs(urlInbound, true); len(keys) > 0 {
		if _, err := w.execFrom(ctx, pairs("id", "delta", keys, vals), func(v string) string {
			return `UPDATE web_url_counts SET inbound = web_url_counts.inbound + v.delta FROM ` + v + ` WHERE web_url_counts.id = v.id`
		}); err != nil {
			return fmt.Errorf("%sadd inbound counts of %d web urls: %w", w.d.Prefix, len(keys), err)
		}
	}
	ids := ChangedDomains(domainInbound, domainURLs)
	if len(ids) == 0 {
		return nil
	}
	rows := Rows{Cols: intCols("id", "inbound", "urls"), N: len(ids), Row: func(i int, v []any) {
		v[0], v[1], v[2] = ids[i], domainInbound[ids[i]], domainURLs[ids[i]]
	}}
	if _, err := w.execFrom(ctx, rows, func(v string) string {
		return `UPDATE web_domains SET inbound = web_domains.inbound + v.inbound, urls = web_domains.urls + v.urls
FROM ` + v + ` WHERE web_domains.id = v.id`
	}); err != nil {
		return fmt.Errorf("%sadd counts of %d web domains: %w", w.d.Prefix, len(ids), err)
	}
	return nil
}

// AddWebLinks inserts links, sorted by (dst, src) (the order of the
// primary key), in one bulk write; a link that exists already fails it.
func (w *WriteTx) AddWebLinks(ctx context.Context, links []shelfmark.WebLink) error {
	return w.insert(ctx, "add %d web links", "web_links", linkRows(links), "")
}

// intern finds the ids of keys (sorted, distinct) in table by column,
// inserting the unknown ones: one statement to find the known, insert for
// the rest (which adds to ids the id of each key it inserted and passes
// over rows that exist), and, only when a concurrent writer inserted some
// of them meanwhile, one more to read those. newKey is called for each key
// this call inserted.
func (w *WriteTx) intern(ctx context.Context, what, table, column string, keys []string,
	insert func(missing []string, ids map[string]int64) error, newKey func(string)) (map[string]int64, error) {
	ids := make(map[string]int64, len(keys))
	find := func(keys []string) error {
		return w.q.EachRow(ctx, `SELECT id, `+column+` FROM `+table+` WHERE `+column+` `+w.d.AnyOf(1), []any{w.d.Strings(keys)}, scanIDs(ids))
	}
	if err := find(keys); err != nil {
		return nil, fmt.Errorf("%sfind %d %s: %w", w.d.Prefix, len(keys), what, err)
	}
	var missing []string
	for _, k := range keys {
		if _, ok := ids[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return ids, nil
	}
	if err := insert(missing, ids); err != nil {
		return nil, fmt.Errorf("%sinsert %d %s: %w", w.d.Prefix, len(missing), what, err)
	}
	var raced []string
	for _, k := range missing {
		if _, ok := ids[k]; ok {
			newKey(k)
		} else {
			raced = append(raced, k)
		}
	}
	if len(raced) > 0 {
		// inserted by a transaction that committed after this one's
		// first statement began (never in SQLite, with one writer)
		if err := find(raced); err != nil {
			return nil, fmt.Errorf("%sfind %d %s: %w", w.d.Prefix, len(raced), what, err)
		}
		for _, k := range raced {
			if _, ok := ids[k]; !ok {
				return nil, fmt.Errorf("%s%s %q neither inserted nor found", w.d.Prefix, what, k)
			}
		}
	}
	return ids, nil
}

// scanIDs returns a function that reads (id, key) rows into ids.
func scanIDs(ids map[string]int64) func(Scanner) error {
	return func(r Scanner) error {
		var id int64
		var k string
		err := r.Scan(&id, &k)
		ids[k] = id
		return err
	}
}

// InternWebDomains sets the IDs of domains by name, inserting the unknown
// ones, safely beside concurrent writers. Of rows that repeat a new name,
// the first gets New.
func (w *WriteTx) InternWebDomains(ctx context.Context, rows []*shelfmark.WebDomainRow) error {
	if len(rows) == 0 {
		return nil
	}
	names, first := FirstOf(len(rows), func(i int) string { return rows[i].Name })
	ids, err := w.intern(ctx, "web domains", "web_domains", "name", names, func(missing []string, ids map[string]int64) error {
		v, args, err := w.d.From(Rows{Cols: []Col{{"name", Text}}, N: len(missing), Row: func(i int, v []any) { v[0] = missing[i] }}, 1)
		if err != nil {
			return err
		}
		return w.q.EachRow(ctx, `INSERT INTO web_domains (name) SELECT name FROM `+v+` WHERE true
ON CONFLICT (name) DO NOTHING RETURNING id, name`, args, scanIDs(ids))
	}, func(name string) { rows[first[name]].New = true })
	if err != nil {
		return err
	}
	for _, d := range rows {
		d.ID = ids[d.Name]
	}
	return nil
}

// InternWebURLs sets the IDs of URLs by SURT, inserting the unknown ones
// with their rows of web_url_counts (as InternWebDomains does).
func (w *WriteTx) InternWebURLs(ctx context.Context, rows []*shelfmark.WebURLRow) error {
	if len(rows) == 0 {
		return nil
	}
	surts, first := FirstOf(len(rows), func(i int) string { return rows[i].SURT })
	ids, err := w.intern(ctx, "web urls", "web_urls", "surt", surts, func(missing []string, ids map[string]int64) error {
		v, args, err := w.d.From(Rows{Cols: []Col{{"surt", Text}, {"url", Text}, {"domain", Int64}}, N: len(missing),
			Row: func(i int, v []any) { u := rows[first[missing[i]]]; v[0], v[1], v[2] = u.SURT, u.URL, u.Domain }}, 1)
		if err != nil {
			return err
		}
		var newIDs, domains []int64
		if err := w.q.EachRow(ctx, w.d.InsertWebURLs(v), args, func(r Scanner) error {
			var id, domain int64
			var surt string
			err := r.Scan(&id, &surt, &domain)
			ids[surt] = id
			newIDs, domains = append(newIDs, id), append(domains, domain)
			return err
		}); err != nil || w.d.InsertWebURLCounts == nil || len(newIDs) == 0 {
			return err
		}
		_, err = w.execFrom(ctx, pairs("id", "domain", newIDs, domains), w.d.InsertWebURLCounts)
		return err
	}, func(surt string) { rows[first[surt]].New = true })
	if err != nil {
		return err
	}
	for _, u := range rows {
		u.ID = ids[u.SURT]
	}
	return nil
}
