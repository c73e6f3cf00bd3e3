package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/shelfmark/shelfmark"
)

// Statements returns a resource's metadata in insertion order.
func (t *tx) Statements(ctx context.Context, key int64, predicates ...string) ([]shelfmark.Statement, error) {
	q := `SELECT predicate, kind, object, lang, datatype FROM statements WHERE resource = ? ORDER BY id`
	args := []any{key}
	if len(predicates) > 0 {
		b, _ := json.Marshal(predicates)
		q = `SELECT predicate, kind, object, lang, datatype FROM statements
			WHERE resource = ? AND predicate IN (SELECT value FROM json_each(?)) ORDER BY id`
		args = append(args, string(b))
	}
	var out []shelfmark.Statement
	err := t.query(ctx, q, args, func(r *sql.Rows) error {
		var s shelfmark.Statement
		var kind int
		if err := r.Scan(&s.Predicate, &kind, &s.Object.Value, &s.Object.Lang, &s.Object.Datatype); err != nil {
			return err
		}
		s.Object.Kind = shelfmark.TermKind(kind)
		out = append(out, s)
		return nil
	})
	return out, err
}

// InsertStatements appends statements, up to 64 rows per statement.
func (t *tx) InsertStatements(ctx context.Context, keys []int64, stmts []shelfmark.Statement) error {
	const width = 6
	return chunked(len(stmts), func(lo, hi int) error {
		args := make([]any, 0, (hi-lo)*width)
		for i := lo; i < hi; i++ {
			s := stmts[i]
			args = append(args, keys[i], s.Predicate, int(s.Object.Kind), s.Object.Value, s.Object.Lang, s.Object.Datatype)
		}
		_, err := t.exec(ctx, `INSERT INTO statements (resource, predicate, kind, object, lang, datatype) VALUES `+placeholders(hi-lo, width), args...)
		return err
	})
}

// DeleteStatements removes exactly the given statements of key.
func (t *tx) DeleteStatements(ctx context.Context, key int64, stmts []shelfmark.Statement) error {
	if len(stmts) == 0 {
		return nil
	}
	type row struct {
		P string `json:"p"`
		K int    `json:"k"`
		O string `json:"o"`
		L string `json:"l"`
		D string `json:"d"`
	}
	rows := make([]row, len(stmts))
	for i, s := range stmts {
		rows[i] = row{s.Predicate, int(s.Object.Kind), s.Object.Value, s.Object.Lang, s.Object.Datatype}
	}
	b, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	_, err = t.exec(ctx, `DELETE FROM statements WHERE resource = ? AND id IN (
		SELECT s.id FROM json_each(?) j JOIN statements s
		  ON s.resource = ? AND s.predicate = j.value->>'p' AND s.kind = j.value->>'k' AND s.object = j.value->>'o'
		 AND s.lang = j.value->>'l' AND s.datatype = j.value->>'d')`, key, string(b), key)
	return err
}
