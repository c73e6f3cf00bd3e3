package shelfmark

// A page image's tiles (rule R6: derived once, in the background) are
// kept as one derivative file of use UseTiles: a ZIP archive of stored,
// uncompressed entries named as IIIF Image API 3.0 level 0 requests,
// "x,y,w,h/w,h/0/default.jpg", beside the entry TileInfoName that
// describes them. A tile is served by reading its bytes at their offset
// in the archive: no decoding, no encoding. The archive of a PDF holds
// the pyramid of each of its pages rendered as an image, under "n/" for
// page n, with the rendered page itself as "n/" + TilePageName.

// TileInfoName is the archive entry holding the pyramid's TileInfo.
const TileInfoName = "info.json"

// TilePageName is the entry, under a PDF page's prefix, holding the page
// rendered whole (the largest size of its image service).
const TilePageName = "full.jpg"

// UsePage names, in a TileSize, the rendered page of a PDF's pyramid.
const UsePage = "page"

// TileInfo describes a tile pyramid: the image's size, its tile sets and
// the sizes of the whole image served from the page's other derivatives.
type TileInfo struct {
	// Width and Height are the full image's size in pixels.
	Width  int `json:"width"`
	Height int `json:"height"`
	// Tiles are the tile sets, as in an Image API info.json.
	Tiles []TileSet `json:"tiles"`
	// Sizes are whole-image sizes other derivative files hold, smallest
	// first.
	Sizes []TileSize `json:"sizes,omitempty"`
	// Pages are the pyramids of a PDF's pages, the first page first (the
	// fields above repeat the first page's); empty for an image.
	Pages []TileInfo `json:"pages,omitempty"`
}

// TileSet is one set of square tiles at several scale factors.
type TileSet struct {
	Width        int   `json:"width"`
	Height       int   `json:"height,omitempty"`
	ScaleFactors []int `json:"scaleFactors"`
}

// TileSize is a whole-image size held by the page's derivative of the
// given use (UseThumbnail, UseAccess), or by the archive (UsePage).
type TileSize struct {
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Use    string `json:"use"`
}
