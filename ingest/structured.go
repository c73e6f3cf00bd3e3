package ingest

import (
	"context"
	"fmt"

	"github.com/shelfmark/shelfmark"
)

// prepareStructured stores the bytes of an item that states its
// resources (Item.Structured: a Shelfmark bag) and builds its group: the
// root of the item's kind with its metadata, access and the collections of
// its MemberKeys that were stored before, then each file set in order
// with its metadata, access and files. Cost: one FindSources call for the
// member keys, one MintIDs call, and every file's bytes stored once.
func (p *pipeline) prepareStructured(ctx context.Context, it *Item) (*pending, error) {
	n := 1
	for _, s := range it.Sets {
		n += 1 + len(s.Files)
	}
	ids, err := p.repo.MintIDs(ctx, n)
	if err != nil {
		return nil, err
	}
	kind := it.Kind
	if kind == "" {
		kind = shelfmark.KindWork
	}
	root := &shelfmark.NewResource{ID: ids[0], Kind: kind, Metadata: it.Metadata,
		Visibility: it.Access.Visibility, Embargo: it.Access.Embargo, Lease: it.Access.Lease}
	if c := p.opts.Collection; c != "" {
		root.MemberOf = append(root.MemberOf, c)
	}
	if len(it.MemberKeys) > 0 {
		found, err := p.repo.FindSources(ctx, it.MemberKeys)
		if err != nil {
			return nil, fmt.Errorf("find the collections of %s: %w", it.Key, err)
		}
		for _, k := range it.MemberKeys {
			if id, ok := found[k]; ok && id != "" && id != p.opts.Collection {
				root.MemberOf = append(root.MemberOf, id)
			}
		}
	}
	g := &pending{key: it.Key, row: it.Row, anyway: it.anyway, group: &shelfmark.NewGroup{SourceKey: it.Key,
		StoreAnyway: p.opts.StoreAnyway, Resources: []*shelfmark.NewResource{root}}}
	next := 1
	for _, s := range it.Sets {
		set := &shelfmark.NewResource{ID: ids[next], Kind: shelfmark.KindFileSet, Parent: root.ID, Metadata: s.Metadata,
			Visibility: s.Access.Visibility, Embargo: s.Access.Embargo, Lease: s.Access.Lease}
		next++
		g.group.Resources = append(g.group.Resources, set)
		g.group.Order = append(g.group.Order, set.ID)
		for i, f := range s.Files {
			blob, err := p.store(ctx, f)
			if err != nil {
				p.settle(ctx, g, false)
				return nil, err
			}
			g.bytes += blob.Size
			g.files++
			g.blobs = append(g.blobs, blob)
			p.track(blob)
			use := f.Use
			if use == "" {
				use = shelfmark.UseOriginal
			}
			g.group.Resources = append(g.group.Resources, &shelfmark.NewResource{ID: ids[next], Kind: shelfmark.KindFile, Parent: set.ID,
				Metadata: s.FileMetadata[i], File: &shelfmark.File{Name: shelfmark.BaseFileName(f.Name), MediaType: f.MediaType,
					Size: blob.Size, SHA256: blob.Digests[shelfmark.SHA256], Use: use}})
			next++
		}
	}
	return g, nil
}
