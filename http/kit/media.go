package kit

import (
	"mime"
	"strings"

	"github.com/shelfmark/shelfmark"
)

// ContentURL is the address of a file's bytes (the REST content route),
// relative to the server's base URL.
func ContentURL(id shelfmark.ID) string { return contentPrefix + string(id) + contentSuffix }

// AppendContentURL appends ContentURL(id) to b.
func AppendContentURL(b []byte, id shelfmark.ID) []byte {
	return append(append(append(b, contentPrefix...), id...), contentSuffix...)
}

// The parts of ContentURL around the id.
const contentPrefix, contentSuffix = "/api/v1/resources/", "/content"

// FileMediaType is a file's media type: characterization's when it found
// one, else the one the file was stored with, else
// application/octet-stream.
func FileMediaType(f *shelfmark.File) string {
	if f.Format.Known() && f.Format.MediaType != "" {
		return f.Format.MediaType
	}
	if f.MediaType != "" {
		return f.MediaType
	}
	return "application/octet-stream"
}

// PageJPEG is the image of a page (its files) that goes into its work's
// PDF (GET /iiif/{id}/pdf): the access copy when it is a JPEG, else an
// original that is one; nil when the page has neither. A work has a PDF
// when one of its pages has such an image.
func PageJPEG(files []*shelfmark.Resource) *shelfmark.Resource {
	var original *shelfmark.Resource
	for _, f := range files {
		if !f.File.Managed() || FileMediaType(f.File) != "image/jpeg" || f.File.Size <= 0 {
			continue
		}
		switch f.File.Use {
		case shelfmark.UseAccess:
			return f
		case shelfmark.UseOriginal, "":
			if original == nil {
				original = f
			}
		}
	}
	return original
}

// ActiveContent reports whether a browser would run content of this media
// type: HTML, XHTML, SVG, XML (which may carry either), or script. A media
// type that does not parse counts as active (the safe choice).
func ActiveContent(mediaType string) bool {
	mt, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		return true // unknown: the safe choice
	}
	switch {
	case mt == "text/html", mt == "application/xhtml+xml", mt == "image/svg+xml",
		mt == "text/xml", mt == "application/xml", strings.HasSuffix(mt, "+xml"),
		strings.Contains(mt, "javascript"), strings.Contains(mt, "ecmascript"):
		return true
	}
	return false
}
