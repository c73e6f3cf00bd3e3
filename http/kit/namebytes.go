package kit

// MaxNameBytes bounds a user name read from a request (sign-in, the
// account routes and forms); a longer one is refused before any lookup.
const MaxNameBytes = 256
