// Package sqlstore holds what the SQLite and PostgreSQL storage backends
// share: the row scanners and column lists of their common tables, the
// pure logic of methods that differ only in SQL dialect, and the check
// that their migrated schemas agree. It depends on neither driver: rows
// arrive through Scanner and statements run through Querier, which both
// backends' transactions implement.
package sqlstore
