package http

import (
	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/api"
	"github.com/shelfmark/shelfmark/http/kit"
)

// facetJSON is one value of a facet of GET /api/v1/search (package api).
type facetJSON = api.FacetJSON

// encodeSearchCursor and decodeSearchCursor are the search cursors' codec
// (kit), under the names the search tests call them by.
func encodeSearchCursor(c shelfmark.SearchCursor) string { return kit.EncodeSearchCursor(c) }

func decodeSearchCursor(s string) (*shelfmark.SearchCursor, error) { return kit.DecodeSearchCursor(s) }
