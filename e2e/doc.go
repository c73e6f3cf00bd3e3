// Package e2e holds the end-to-end suites: they build the shelfmark binary
// of this tree and drive it as its users do (the README's walk, a browser
// on the web interface, servers killed while clients write, a cluster of
// servers and workers behind HAProxy on PostgreSQL with a replica and an
// S3 store). It has no code of its own outside its tests.
package e2e
