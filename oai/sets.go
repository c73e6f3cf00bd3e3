package oai

import (
	"context"

	"github.com/shelfmark/shelfmark"
)

// listSets answers ListSets: public collections by key, a page at a time.
// completeListSize is not given for sets (counting them is not a keyset
// walk, and lists of sets are short).
func (p *Provider) listSets(ctx context.Context, res *response, a args) error {
	t := &token{Verb: "ListSets", Total: -1}
	first := true
	if text, ok := a.get("resumptionToken"); ok {
		key, err := p.tokenKey(ctx)
		if err != nil {
			return err
		}
		if t, err = decodeToken(text, key); err != nil || t.Verb != "ListSets" {
			res.fail(res.a, errBadResumption, "The resumption token is not one this repository issued for ListSets (or it was altered): start the list again.")
			return nil
		}
		first = false
	}
	var sets []shelfmark.OAISet
	err := p.store.View(ctx, func(tx shelfmark.ReadTx) (err error) {
		sets, err = tx.OAISets(ctx, t.After, p.cfg.PageSize+1)
		return err
	})
	if err != nil {
		return err
	}
	if len(sets) == 0 && first {
		res.fail(res.a, errNoSetHierarchy, "This repository has no sets (no public collections).")
		return nil
	}
	more := len(sets) > p.cfg.PageSize
	if more {
		sets = sets[:p.cfg.PageSize]
	}
	b := append(res.body, "<ListSets>\n"...)
	for _, s := range sets {
		b = append(b, "<set><setSpec>"...)
		b = appendEscaped(b, s.Spec)
		b = append(b, "</setSpec><setName>"...)
		b = appendEscaped(b, s.Name)
		b = append(b, "</setName></set>\n"...)
	}
	if !first || more {
		last := int64(0)
		if more {
			last = sets[len(sets)-1].Key
		}
		var err error
		if b, err = p.appendNext(ctx, b, t, more, last, 0, len(sets)); err != nil {
			return err
		}
	}
	res.body = append(b, "</ListSets>\n"...)
	return nil
}
