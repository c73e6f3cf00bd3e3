package shelfmark

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// This file tells apart what two ingest groups hold, or a group and a
// stored work: the root's metadata, and for each child of the root in
// order, the original files it holds (by use and SHA-256, or URL). Titles
// of file sets, file names and media types are left out: they describe the
// content, they are not it. Derivatives (thumbnails, text, …) are left out,
// since a stored work gains them after its ingest.

// groupContent is the content of a group or of a stored work.
type groupContent struct {
	fields   []Field
	children [][]string // per child in order: its original files, sorted
}

// contentFile is how one original file enters a content comparison.
func contentFile(f *File) string {
	if f.ExternalURL != "" {
		return f.Use + " url " + f.ExternalURL
	}
	use := f.Use
	if use == "" {
		use = UseOriginal
	}
	return use + " sha256 " + strings.ToLower(f.SHA256)
}

// original reports whether f is one of the files an ingest stores (not a
// derivative).
func original(f *File) bool {
	return f != nil && (f.Use == "" || f.Use == UseOriginal || f.Use == UseSource)
}

// digest is a SHA-256 of the content in hex: two contents are the same
// when their digests are. The objects of a field are compared as a set.
func (c *groupContent) digest() string {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	str := func(s string) {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
		h.Write([]byte(s))
	}
	num := func(v int) { h.Write(n[:binary.PutUvarint(n[:], uint64(v))]) }
	num(len(c.fields))
	for _, f := range c.fields {
		str(f.Predicate)
		objs := slices.Clone(f.Objects)
		slices.SortFunc(objs, func(a, b Term) int {
			return cmp.Or(cmp.Compare(a.Kind, b.Kind), strings.Compare(a.Value, b.Value), strings.Compare(a.Lang, b.Lang), strings.Compare(a.Datatype, b.Datatype))
		})
		objs = slices.Compact(objs)
		num(len(objs))
		for _, o := range objs {
			num(int(o.Kind))
			str(o.Value)
			str(o.Lang)
			str(o.Datatype)
		}
	}
	num(len(c.children))
	for _, files := range c.children {
		num(len(files))
		for _, f := range files {
			str(f)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// contentOf is the content of a group whose resources have the ids ids:
// the root's children named by Order first, in that order, then its other
// children in the order of the group.
func contentOf(g *NewGroup, ids []ID) *groupContent {
	c := &groupContent{fields: FieldsOf(g.Resources[0].Metadata)}
	index := make(map[ID]int, len(ids))
	for i, id := range ids {
		index[id] = i
	}
	files := make(map[ID][]string)
	for i, nr := range g.Resources {
		if i > 0 && nr.Kind == KindFile && original(nr.File) {
			files[nr.Parent] = append(files[nr.Parent], contentFile(nr.File))
		}
	}
	add := func(id ID) {
		fs := files[id]
		slices.Sort(fs)
		c.children = append(c.children, fs)
	}
	ordered := make(map[ID]bool, len(g.Order))
	for _, id := range g.Order {
		ordered[id] = true
		add(id)
	}
	for i, nr := range g.Resources {
		if i > 0 && nr.Parent == ids[0] && !ordered[ids[i]] {
			add(ids[i])
		}
	}
	return c
}

// storedContent reads the content of the stored work root for a
// comparison with want: at most one child more than want has, and at most
// a few files besides the originals of each. It returns nil when the work
// is not live or plainly differs (more children). The cost is bounded by
// the size of want, not of the stored work.
func storedContent(ctx context.Context, tx ReadTx, root int64, want *groupContent) (*groupContent, error) {
	row, err := tx.Resource(ctx, root)
	if err != nil || row == nil || row.Deleted != nil {
		return nil, err
	}
	fields, err := tx.Fields(ctx, root)
	if err != nil {
		return nil, fmt.Errorf("stored content of %d: %w", root, err)
	}
	c := &groupContent{fields: fields}
	perChild := 0
	for _, fs := range want.children {
		perChild = max(perChild, len(fs))
	}
	// derivatives sit beside the originals: room for them, so that the
	// originals are all read
	perChild += 16
	var kids []*ResourceRow
	after := int64(0)
	for len(kids) <= len(want.children) {
		limit := min(MaxPageSize, len(want.children)+1-len(kids))
		page, err := tx.Children(ctx, root, after, limit)
		if err != nil {
			return nil, fmt.Errorf("stored content of %d: %w", root, err)
		}
		kids = append(kids, page...)
		if len(page) < limit {
			break
		}
		after = page[len(page)-1].Position
	}
	if len(kids) != len(want.children) {
		return nil, nil
	}
	at := make(map[int64]int, len(kids))
	keys := make([]int64, len(kids))
	for i, k := range kids {
		at[k.Key], keys[i] = i, k.Key
	}
	c.children = make([][]string, len(kids))
	for lo := 0; lo < len(keys); lo += MaxPageSize {
		rows, err := tx.ChildFiles(ctx, keys[lo:min(lo+MaxPageSize, len(keys))], perChild)
		if err != nil {
			return nil, fmt.Errorf("stored content of %d: %w", root, err)
		}
		for _, fr := range rows {
			if i, ok := at[fr.Row.Parent]; ok && original(fr.File) {
				c.children[i] = append(c.children[i], contentFile(fr.File))
			}
		}
	}
	for _, fs := range c.children {
		slices.Sort(fs)
	}
	return c, nil
}

// anywayKey is the key under which a group stored anyway (NewGroup.
// StoreAnyway) is recorded: "anyway:" + the SHA-256 of its content + ":" +
// its source key. The source key itself keeps naming the work first stored
// under it.
func anywayKey(sourceKey string, c *groupContent) string {
	return "anyway:" + c.digest() + ":" + sourceKey
}
