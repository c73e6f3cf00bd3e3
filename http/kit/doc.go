// Package kit holds what the faces of the HTTP layer (the REST API, the
// HTML interface, IIIF, the web archive pages) share: the dependencies
// they are given (Deps), the shape of a route they hand to the shell
// (Route), and the small helpers every face needs to answer alike (the
// public base URL, content addresses, media types, Content-Disposition).
// It holds no state of its own: what it shares comes in through Deps.
package kit
