package http

import (
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/http/ui"
)

// The names the tests of the composed server read from the interface
// (package ui) and from kit, under the names the tests have always used.
const (
	csrfField          = ui.CSRFField
	csrfHeader         = ui.CSRFHeader
	uiCSP              = ui.CSP
	pagesChunk         = ui.PagesChunk
	uiWorkPageSize     = ui.WorkPageSize
	webUIPage          = ui.WebPageSize
	webUILinks         = ui.WebLinks
	adminPageSize      = ui.AdminPageSize
	homeCollections    = ui.HomeCollections
	collectionPageSize = ui.CollectionPageSize
	maxFormRows        = ui.MaxFormRows
	bulkMaxRunning     = ui.BulkMaxRunning
	bulkStatePreview   = ui.BulkStatePreview
	maxNextLen         = kit.MaxNextLen
)

type (
	bulkProgressJSON = ui.BulkProgress
	adminEvent       = ui.AdminEvent
)

var (
	titleOf      = ui.TitleOf
	returnPath   = kit.ReturnPath
	returnPathOr = kit.ReturnPathOr
)
