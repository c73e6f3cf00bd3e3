package sqlite

// #include <stdint.h>
// int shelfmark_register_chunks(void);
// static const unsigned char *shelfmark_chunk_at(int64_t at) { return (const unsigned char *)(intptr_t)at; }
import "C"

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// Reading rows in chunks (chunks.c).
//
// The driver hands a statement's rows to Go one at a time: a crossing
// into C, a boxed Go value per column and database/sql's conversion of
// each into its destination, several times the B-tree work for a page
// of a book's file rows. The statements that read hundreds of rows
// at a time (chunked) run instead inside shelfmark_chunks, which steps
// them in C and packs their rows into chunks of about 64 KiB, and
// chunkScanner decodes each where it lies in SQLite's memory (chunkAt)
// straight into the scan's destinations: one crossing a chunk and no copy
// of it, a short text made once a scan and a row's long texts one string
// (see chunkShort). What the statement reads, the
// transaction it reads in and the errors it meets are the same; the
// tracer sees the statement itself.

// maxChunkArgs is the number of values shelfmark_chunks binds (chunks.c's
// CHUNKS_ARGS); a statement given more runs row by row.
const maxChunkArgs = 16

// chunkSQL[n] runs a statement given n values through shelfmark_chunks:
// where each chunk is in SQLite's memory and its length, read there
// (chunkAt), and an empty BLOB scanned as sql.RawBytes, which holds
// database/sql's lock of the rows until the next step, so that a
// cancelled context cannot end the statement (and free the chunk) while
// the chunk is read.
var chunkSQL = func() (s [maxChunkArgs + 1]string) {
	for n := range s {
		var b strings.Builder
		b.WriteString("SELECT at, size, X'' FROM shelfmark_chunks(?1")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, ", ?%d", i+1)
		}
		b.WriteString(")")
		s[n] = b.String()
	}
	return s
}()

// registerChunks adds shelfmark_chunks to every SQLite connection the
// process opens from then on (SQLite's automatic extensions are the
// process's), once, before Open opens its pools.
var registerChunks = sync.OnceValue(func() error {
	if rc := C.shelfmark_register_chunks(); rc != 0 {
		return fmt.Errorf("register the table-valued function shelfmark_chunks: SQLite error %d", int(rc))
	}
	return nil
})

// queryChunks is query of a statement read through shelfmark_chunks: the
// same rows to scan, in the same order, with the same errors.
//
// The statement that runs it names it (by a hash of its text) in a
// comment, so each chunked statement runs through a prepared statement of
// its own: database/sql gives a transaction the same driver statement for
// the same text, and two reads through one would reset each other.
func (t *readTx) queryChunks(ctx context.Context, query string, args []any, scan func(sqlstore.Scanner) error) error {
	h := fnv.New64a()
	h.Write([]byte(query))
	s, err := t.stmt(ctx, chunkSQL[len(args)]+" /* "+strconv.FormatUint(h.Sum64(), 36)+" */")
	if err != nil {
		return err
	}
	qargs := make([]any, 0, len(args)+1)
	qargs = append(append(qargs, query), args...)
	rows, err := s.QueryContext(ctx, qargs...)
	if err != nil {
		return full(fmt.Errorf("%s: %w", firstLine(query), err))
	}
	defer rows.Close()
	var n int64
	var cs chunkScanner
	for rows.Next() {
		// the chunk in SQLite's memory, read before the next step: every
		// text and BLOB scanned is copied out of it
		var (
			at, size int64
			hold     sql.RawBytes
		)
		if err := rows.Scan(&at, &size, &hold); err != nil {
			return fmt.Errorf("%s: read a chunk: %w", firstLine(query), err)
		}
		if err := cs.reset(chunkAt(at, size)); err != nil {
			return fmt.Errorf("%s: %w", firstLine(query), err)
		}
		for cs.next() {
			n++
			if err := scan(&cs); err != nil {
				return fmt.Errorf("%s: scan: %w", firstLine(query), err)
			}
		}
		if cs.err != nil {
			return fmt.Errorf("%s: %w", firstLine(query), cs.err)
		}
	}
	if err := rows.Err(); err != nil {
		return full(fmt.Errorf("%s: %w", firstLine(query), err))
	}
	if t.db.tracer != nil {
		t.db.tracer(query, n)
	}
	return nil
}

// chunkAt is the chunk of size bytes at address at in SQLite's memory
// (columns at and size of shelfmark_chunks): valid until the statement
// that read it steps again or ends. A chunk is never empty (it holds its
// column count); none (size 0 or no address) is nil.
func chunkAt(at, size int64) []byte {
	if at == 0 || size <= 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(C.shelfmark_chunk_at(C.int64_t(at)))), size)
}

// The tags of a chunk's values (chunks.c).
const (
	chunkNull  = 0
	chunkInt   = 1
	chunkFloat = 2
	chunkText  = 3
	chunkBlob  = 4
)

// chunkValue is one value of a chunk's row: its tag, and its integer (or
// its float's bits), or where its bytes are in the chunk.
type chunkValue struct {
	tag        byte
	bits       uint64
	start, end int
}

// chunkScanner is the sqlstore.Scanner of the rows of a chunk: next
// finds a row's values, Scan converts them into destinations as
// database/sql and rowScanner would.
type chunkScanner struct {
	chunk []byte
	ncol  int
	off   int // where the next row starts
	vals  []chunkValue
	// the span of the current row's long texts (longer than chunkShort)
	// and that span as a string, made at the first of them that is read
	longStart, longEnd int
	rowText            string
	// short texts made before, by a hash of their bytes (chunkShort)
	short [chunkShortSlots]string
	err   error
}

// A text of at most chunkShort bytes is looked up among the short texts
// the scan made before (its slot, by a hash of its bytes), and made a
// string of its own when it is not there: the kinds, visibilities, uses
// and media types of the rows of a page repeat from row to row and cost
// nothing after the first, and a row's other short texts take a small
// allocation each. A longer text is a slice of one string of the row's
// long texts (from the first to the last of them), so that the short
// ones and the row's numbers are not copied into it.
const (
	chunkShort      = 24
	chunkShortSlots = 64
)

// shortSlot is the slot of a short text b (not empty).
func shortSlot(b []byte) int {
	n := len(b)
	return (n*31 + int(b[0])*7 + int(b[n/2])*3 + int(b[n-1])) & (chunkShortSlots - 1)
}

// maxColumns is the most columns a SQLite statement can have (its
// SQLITE_MAX_COLUMN at most).
const maxColumns = 32767

// errChunk is a chunk that does not decode: a defect of chunks.c, never
// of the data.
var errChunk = errors.New("a chunk of rows does not decode")

// reset starts reading chunk.
func (cs *chunkScanner) reset(chunk []byte) error {
	if len(chunk) < 4 {
		return errChunk
	}
	ncol := binary.LittleEndian.Uint32(chunk)
	if ncol == 0 || ncol > maxColumns {
		return errChunk
	}
	cs.chunk, cs.ncol, cs.off, cs.err = chunk, int(ncol), 4, nil
	if cap(cs.vals) < cs.ncol {
		cs.vals = make([]chunkValue, cs.ncol)
	}
	cs.vals = cs.vals[:cs.ncol]
	return nil
}

// next reads the next row's values; false at the chunk's end or when it
// does not decode (err).
func (cs *chunkScanner) next() bool {
	b := cs.chunk
	if cs.err != nil || cs.off >= len(b) {
		return false
	}
	cs.longStart, cs.longEnd, cs.rowText = -1, -1, ""
	off := cs.off
	for i := range cs.vals {
		if off >= len(b) {
			cs.err = errChunk
			return false
		}
		v := &cs.vals[i]
		v.tag = b[off]
		off++
		switch v.tag {
		case chunkNull:
		case chunkInt, chunkFloat:
			if off+8 > len(b) {
				cs.err = errChunk
				return false
			}
			v.bits = binary.LittleEndian.Uint64(b[off:])
			off += 8
		case chunkText, chunkBlob:
			if off+4 > len(b) {
				cs.err = errChunk
				return false
			}
			n := int(binary.LittleEndian.Uint32(b[off:]))
			off += 4
			if n > len(b)-off {
				cs.err = errChunk
				return false
			}
			v.start, v.end = off, off+n
			if n > chunkShort {
				if cs.longStart < 0 {
					cs.longStart = v.start
				}
				cs.longEnd = v.end
			}
			off += n
		default:
			cs.err = errChunk
			return false
		}
	}
	cs.off = off
	return true
}

// text is a TEXT or BLOB value as a string: a short one made once a scan
// (chunkShort), a long one a slice of the row's long texts, made into one
// string at the row's first.
func (cs *chunkScanner) text(v *chunkValue) string {
	b := cs.chunk[v.start:v.end]
	switch {
	case len(b) == 0:
		return ""
	case len(b) <= chunkShort:
		slot := &cs.short[shortSlot(b)]
		if *slot != string(b) {
			*slot = string(b)
		}
		return *slot
	}
	if cs.rowText == "" {
		cs.rowText = string(cs.chunk[cs.longStart:cs.longEnd])
	}
	return cs.rowText[v.start-cs.longStart : v.end-cs.longStart]
}

// Scan implements sqlstore.Scanner.
func (cs *chunkScanner) Scan(dest ...any) error {
	if len(dest) != cs.ncol {
		return fmt.Errorf("sql: expected %d destination arguments in Scan, not %d", cs.ncol, len(dest))
	}
	for i, d := range dest {
		if err := cs.assign(d, &cs.vals[i]); err != nil {
			return fmt.Errorf("sql: Scan error on column index %d: %w", i, err)
		}
	}
	return nil
}

// assign converts v into d.
func (cs *chunkScanner) assign(d any, v *chunkValue) error {
	switch p := d.(type) {
	case *int64:
		n, err := cs.integer(v)
		*p = n
		return err
	case *int:
		n, err := cs.integer(v)
		if err == nil && int64(int(n)) != n {
			err = fmt.Errorf("converting %d to int: out of range", n)
		}
		*p = int(n)
		return err
	case *float64:
		switch v.tag {
		case chunkFloat:
			*p = math.Float64frombits(v.bits)
		case chunkInt:
			*p = float64(int64(v.bits))
		case chunkText, chunkBlob:
			f, err := strconv.ParseFloat(cs.text(v), 64)
			if err != nil {
				return fmt.Errorf("converting %q to float64: %w", cs.text(v), err)
			}
			*p = f
		default:
			return fmt.Errorf("converting NULL to float64 is unsupported")
		}
		return nil
	case *string:
		if v.tag == chunkNull {
			return fmt.Errorf("converting NULL to string is unsupported")
		}
		*p = cs.str(v)
		return nil
	case **string:
		if v.tag == chunkNull {
			*p = nil
			return nil
		}
		s := cs.str(v)
		*p = &s
		return nil
	case *[]byte:
		switch v.tag {
		case chunkNull:
			*p = nil
		case chunkText, chunkBlob:
			*p = append([]byte{}, cs.chunk[v.start:v.end]...)
		default:
			*p = []byte(cs.str(v))
		}
		return nil
	case *bool:
		switch {
		case v.tag == chunkInt && v.bits <= 1:
			*p = v.bits == 1
		case v.tag == chunkText || v.tag == chunkBlob:
			b, err := strconv.ParseBool(cs.text(v))
			if err != nil {
				return fmt.Errorf("converting %s to bool: %w", cs.describe(v), err)
			}
			*p = b
		default:
			return fmt.Errorf("converting %s to bool is unsupported", cs.describe(v))
		}
		return nil
	case *any:
		*p = cs.value(v)
		return nil
	case sql.Scanner:
		return p.Scan(cs.value(v))
	}
	return fmt.Errorf("unsupported Scan destination %T", d)
}

// integer is an integer column's value as scanInt reads it.
func (cs *chunkScanner) integer(v *chunkValue) (int64, error) {
	switch v.tag {
	case chunkInt:
		return int64(v.bits), nil
	case chunkNull:
		return 0, fmt.Errorf("converting NULL to an integer is unsupported")
	}
	return scanInt(cs.value(v))
}

// str is a non-NULL value as a string, as database/sql makes one.
func (cs *chunkScanner) str(v *chunkValue) string {
	switch v.tag {
	case chunkInt:
		return strconv.FormatInt(int64(v.bits), 10)
	case chunkFloat:
		return strconv.FormatFloat(math.Float64frombits(v.bits), 'g', -1, 64)
	}
	return cs.text(v)
}

// value is v as the driver gives it: int64, float64, string (TEXT),
// []byte (a BLOB, copied) or nil.
func (cs *chunkScanner) value(v *chunkValue) any {
	switch v.tag {
	case chunkInt:
		return int64(v.bits)
	case chunkFloat:
		return math.Float64frombits(v.bits)
	case chunkText:
		return cs.text(v)
	case chunkBlob:
		return append([]byte(nil), cs.chunk[v.start:v.end]...)
	}
	return nil
}

// describe names v for an error.
func (cs *chunkScanner) describe(v *chunkValue) string {
	switch v.tag {
	case chunkNull:
		return "NULL"
	case chunkText, chunkBlob:
		return strconv.Quote(cs.text(v))
	}
	return cs.str(v)
}

// chunkedStatements are the statements read through shelfmark_chunks:
// those that read many rows of many columns at a time, a page of them at
// most (a chunk's rows are decoded at once). Their columns are INTEGER,
// TEXT and BLOB (the driver's conversions of columns declared as dates or
// booleans are not made).
func chunkedStatements() map[string]bool {
	return map[string]bool{
		dialect.Reads.PageFiles:     true,
		dialect.Reads.ChildFiles:    true,
		dialect.Resources.Children:  true,
		dialect.Resources.Resources: true,
		dialect.Fields.FieldsOf:     true,
		dialect.Fields.Changes:      true,
	}
}
