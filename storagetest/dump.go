package storagetest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
)

// Dump writes every resource of store in one canonical form, a line per
// resource sorted by id, so that two repositories that hold the same
// resources give the same text (a rebuild is checked with it): its id,
// kind, parent and place, own and effective access, version, change
// sequence number and times, depositor, source keys, memberships, sorted
// metadata, file description and, for a collection, its grants. A
// tombstone gives its id, kind and parent, and for a work or collection
// its deletion's time, sequence number and version too (a file set or
// file deleted inside a live work is rebuilt from the version of the copy
// that first lacked it, whose time is the newest change that version
// holds). Derivatives (the pipeline makes them again) are left out. The
// id secret is the first line. Cost: every row, read 500 at a time.
func Dump(ctx context.Context, store shelfmark.Storage) (string, error) {
	var lines []string
	var secret string
	var ids *shelfmark.IDCodec
	err := store.View(ctx, func(tx shelfmark.ReadTx) error {
		var err error
		if secret, _, err = tx.Setting(ctx, shelfmark.IDSecretSetting); err != nil {
			return err
		}
		if ids, err = codec(secret); err != nil {
			return err
		}
		names := map[int64]string{}
		for after, limit := int64(0), 500; ; {
			rows, err := tx.Changes(ctx, after, limit)
			if err != nil {
				return err
			}
			if len(rows) == limit {
				// a page may end inside a commit's seq: leave that seq
				// to the next page, or read more when it fills the page
				last, n := rows[len(rows)-1].Seq, len(rows)
				for n > 0 && rows[n-1].Seq == last {
					n--
				}
				if n == 0 {
					limit *= 2
					continue
				}
				rows = rows[:n]
			}
			if len(rows) == 0 {
				return nil
			}
			ls, err := dumpRows(ctx, tx, ids, rows, names)
			if err != nil {
				return err
			}
			lines = append(lines, ls...)
			after = rows[len(rows)-1].Seq
		}
	})
	if err != nil {
		return "", fmt.Errorf("dump: %w", err)
	}
	sort.Strings(lines)
	return "id secret " + secret + "\n" + strings.Join(lines, "\n") + "\n", nil
}

// codec is the id codec of the setting value secret.
func codec(secret string) (*shelfmark.IDCodec, error) {
	if secret == "legacy" {
		return shelfmark.LegacyIDCodec(), nil
	}
	var b []byte
	if _, err := fmt.Sscanf(secret, "%x", &b); err != nil {
		return nil, fmt.Errorf("id secret %q: %w", secret, err)
	}
	return shelfmark.NewIDCodec(b), nil
}

// dumpRows is the lines of rows.
func dumpRows(ctx context.Context, tx shelfmark.ReadTx, ids *shelfmark.IDCodec, rows []*shelfmark.ResourceRow, names map[int64]string) ([]string, error) {
	keys := make([]int64, len(rows))
	for i, r := range rows {
		keys[i] = r.Key
	}
	fields, err := tx.FieldsOf(ctx, keys)
	if err != nil {
		return nil, err
	}
	memberOf, err := tx.MemberOfMany(ctx, keys)
	if err != nil {
		return nil, err
	}
	owners, err := tx.Owners(ctx, keys)
	if err != nil {
		return nil, err
	}
	sources, err := tx.SourceKeysOf(ctx, keys)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range rows {
		if r.Source != 0 {
			continue
		}
		var b strings.Builder
		id := func(k int64) string {
			if k == 0 {
				return "-"
			}
			return string(ids.Encode(k))
		}
		fmt.Fprintf(&b, "%s %s parent=%s", id(r.Key), r.Kind, id(r.Parent))
		if r.Deleted != nil {
			fmt.Fprint(&b, " deleted")
			if r.Kind == shelfmark.KindWork || r.Kind == shelfmark.KindCollection {
				fmt.Fprintf(&b, "=%s seq=%d version=%d", stamp(r.Deleted), r.Seq, r.Version)
			}
			out = append(out, b.String())
			continue
		}
		pos := r.Position
		if pos >= shelfmark.UnorderedBase {
			pos = 0
		}
		fmt.Fprintf(&b, " position=%d access=%s effective=%s version=%d seq=%d created=%s modified=%s",
			pos, access(r.Own()), access(r.Effective), r.Version, r.Seq, stamp(&r.Created), stamp(&r.Modified))
		if u, ok := owners[r.Key]; ok {
			name, seen := names[u]
			if !seen {
				usr, err := tx.UserByKey(ctx, u)
				if err != nil {
					return nil, err
				}
				if usr != nil {
					name = usr.Name
				}
				names[u] = name
			}
			fmt.Fprintf(&b, " depositor=%s", name)
		}
		if sk := sources[r.Key]; len(sk) > 0 {
			fmt.Fprintf(&b, " sources=%q", sk)
		}
		var ms []string
		for _, c := range memberOf[r.Key] {
			ms = append(ms, id(c))
		}
		sort.Strings(ms)
		fmt.Fprintf(&b, " memberOf=%v", ms)
		var stmts []string
		for _, s := range shelfmark.StatementsOf(fields[r.Key]) {
			stmts = append(stmts, fmt.Sprintf("%s=%+v", s.Predicate, s.Object))
		}
		sort.Strings(stmts)
		fmt.Fprintf(&b, " metadata=%q", stmts)
		if r.Kind == shelfmark.KindFile {
			f, err := tx.File(ctx, r.Key)
			if err != nil {
				return nil, err
			}
			if f != nil {
				fmt.Fprintf(&b, " file={%s %s %d %s %s %s %s %s}", f.Name, f.MediaType, f.Size, f.SHA256, f.SHA512, f.MD5, f.Use, f.ExternalURL)
				if f.Format != nil {
					fmt.Fprintf(&b, " format=%+v", *f.Format)
				}
			}
		}
		if r.Kind == shelfmark.KindCollection {
			gs, err := tx.GrantsOn(ctx, []int64{r.Key})
			if err != nil {
				return nil, err
			}
			var g []string
			for _, x := range gs {
				g = append(g, x.Principal+"="+string(x.Role))
			}
			sort.Strings(g)
			fmt.Fprintf(&b, " grants=%v", g)
		}
		out = append(out, b.String())
	}
	return out, nil
}

// access is a canonical form of a.
func access(a shelfmark.Access) string {
	return fmt.Sprintf("%s/%s/%s", a.Visibility, stamp(a.Embargo), stamp(a.Lease))
}

// stamp is t in UTC with microseconds, "-" for nil.
func stamp(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format("2006-01-02T15:04:05.000000Z")
}

// DiffLines lists the lines only in a (-) and only in b (+); "" when the
// texts hold the same lines.
func DiffLines(a, b string) string {
	in := func(s string) map[string]int {
		m := map[string]int{}
		for _, l := range strings.Split(s, "\n") {
			m[l]++
		}
		return m
	}
	ma, mb := in(a), in(b)
	var out strings.Builder
	for _, l := range strings.Split(a, "\n") {
		if mb[l] == 0 {
			fmt.Fprintf(&out, "- %s\n", l)
		}
	}
	for _, l := range strings.Split(b, "\n") {
		if ma[l] == 0 {
			fmt.Fprintf(&out, "+ %s\n", l)
		}
	}
	return out.String()
}
