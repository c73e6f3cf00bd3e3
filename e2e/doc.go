// Package e2e holds the end-to-end suites: they build the shelfmark binary
// of this tree and drive it as its users do (the README's walk, a browser
// on the web interface, servers and workers killed while clients write,
// several servers taking over each other's elected loops, a cluster of
// servers and workers behind HAProxy on PostgreSQL with a replica and an
// S3 store, the account verbs run as a person runs them). It has no code
// of its own outside its tests.
package e2e
