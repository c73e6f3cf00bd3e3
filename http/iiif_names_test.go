package http

import "github.com/shelfmark/shelfmark/http/iiif"

// The names the IIIF tests of the composed server read from the face.
const (
	iiifContext        = iiif.Context
	iiifMediaType      = iiif.MediaType
	iiifChildPage      = iiif.ChildPage
	iiifCollectionPage = iiif.CollectionPage
	iiifSearchPage     = iiif.SearchPage
	imageContext       = iiif.ImageContext
	search1Context     = iiif.Search1Context
	search2Context     = iiif.Search2Context
	search1Profile     = iiif.Search1Profile
	search2Profile     = iiif.Search2Profile
	hocrProfile        = iiif.HOCRProfile
	altoProfile        = iiif.ALTOProfile
)
