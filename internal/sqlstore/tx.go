package sqlstore

import "context"

// Tx is embedded in both backends' transactions and implements the
// storage methods they run the same way: the logic is here once, and
// only the statements, in Dialect, differ. It holds no state of its own
// beyond the transaction it runs on, so embedding it costs three words per
// transaction and no allocation.
type Tx struct {
	q Querier
	d *Dialect
}

// NewTx returns the shared half of a transaction that runs d's statements
// on q.
func NewTx(q Querier, d *Dialect) Tx { return Tx{q: q, d: d} }

// Dialect is a backend's statements for the methods of Tx, WriteTx and
// AuthFailures, and how it binds a list. Each statement takes its
// arguments in the order the method passes them: PostgreSQL numbers them
// $1, $2, …; SQLite uses ? where each is used once in order, and ?NNN
// (bound by number) where one is used twice or out of order.
type Dialect struct {
	// Prefix starts every error message of Tx, WriteTx and AuthFailures
	// ("sqlite: ").
	Prefix string
	// Int64s binds a list of integers as one argument (a JSON array for
	// json_each in SQLite, an array in PostgreSQL).
	Int64s func([]int64) any
	// Strings binds a list of strings as one argument.
	Strings func([]string) any
	// Arg is the placeholder of the nth argument (from 1) of a statement
	// built at run time: $n in PostgreSQL, ?n in SQLite.
	Arg func(n int) string
	// AnyOf is the test that a column is in the list bound as the nth
	// argument, after the column: = ANY($n) in PostgreSQL, IN (SELECT
	// value FROM json_each(?n)) in SQLite.
	AnyOf func(n int) string
	// Insert writes rows into table in as few statements as the dialect
	// allows (SQLite: an INSERT of up to 64 rows of VALUES each;
	// PostgreSQL: one INSERT over unnest arrays, or COPY for many rows).
	// tail ends each statement: "" when the rows must be new (one that
	// exists fails the write), or an ON CONFLICT clause.
	Insert func(ctx context.Context, q Execer, table string, rows Rows, tail string) error
	// From binds rows as one table expression named v, whose columns are
	// the rows' column names, with its placeholders numbered from first;
	// it returns the expression and its arguments. SQLite sends one JSON
	// array read by json_each (no Bytes columns); PostgreSQL one array
	// per column read by unnest.
	From func(rows Rows, first int) (expr string, args []any, err error)

	Web
	WebWrites
	OAI
	Accounts
	AccountWrites
	Resources
	ResourceWrites
	Fields
	Uploads
	Jobs
	AuthFailureSQL
	OAIWrites
	Search
	SearchStatements
	SourceSQL
	FileSQL
	Reads
	FixitySQL
	UsageSQL
	AccessRequestSQL
}
