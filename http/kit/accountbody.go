package kit

// MaxAccountBody bounds the JSON bodies of the account routes but the
// roles' (a login or a new token is a few hundred bytes).
const MaxAccountBody = 64 << 10
