package http

import "github.com/shelfmark/shelfmark/http/kit"

// maxRanges is the most ranges a request is served as parts (kit).
const maxRanges = kit.MaxRanges
