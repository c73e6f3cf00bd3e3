// Package sqlstore holds what the SQLite and PostgreSQL storage backends
// share: the row scanners and column lists of their common tables, the
// storage methods that differ only in SQL dialect (Tx and WriteTx, over a
// backend's Dialect), the statements both dialects run alike (Shared), the
// migrations both accept and the logic that applies migrations
// (Migrations, Migrate), and the check that their migrated schemas agree.
// It depends on neither driver: rows arrive through Scanner and statements
// run through Querier, which both backends' transactions implement.
package sqlstore
