package oai

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/marc"
)

// Media types of source records.
const (
	// MediaMARC is an ISO 2709 MARC record (MARC-8 or UTF-8).
	MediaMARC = "application/marc"
	// MediaMARCXML is a MARCXML record.
	MediaMARCXML = "application/marcxml+xml"
)

// maxSourceRecord bounds what Render reads of a source file: an ISO 2709
// record is at most 99,999 bytes, and a MARCXML rendering of one is a few
// times that.
const maxSourceRecord = 1 << 20

// MARCXML is the marcxml format (MARC 21 slim): for works catalogued from a
// MARC record, the record as it came, in MARCXML. The record is read from
// the work's first source file of media type MediaMARC or MediaMARCXML;
// MARC-8 records are written as UTF-8 (leader/09 "a"). Works without one
// have no marcxml record.
type MARCXML struct{}

// Prefix implements Format.
func (MARCXML) Prefix() string { return "marcxml" }

// Schema implements Format.
func (MARCXML) Schema() string { return "http://www.loc.gov/standards/marcxml/schema/MARC21slim.xsd" }

// Namespace implements Format.
func (MARCXML) Namespace() string { return "http://www.loc.gov/MARC21/slim" }

// Render implements Format.
func (MARCXML) Render(ctx context.Context, w *Work) ([]byte, bool, error) {
	for _, f := range w.Sources {
		if f.MediaType != MediaMARC && f.MediaType != MediaMARCXML || !f.Managed() {
			continue
		}
		rec, err := readSource(ctx, w.Blobs, f)
		if err != nil {
			return nil, false, fmt.Errorf("oai: marcxml of %s: %w", w.ID, err)
		}
		b, err := marc.AppendXML(nil, rec)
		if err != nil {
			return nil, false, fmt.Errorf("oai: marcxml of %s: %w", w.ID, err)
		}
		return b, true, nil
	}
	return nil, false, nil
}

// readSource reads the one MARC record of a source file.
func readSource(ctx context.Context, blobs shelfmark.BlobStore, f *shelfmark.File) (*marc.Record, error) {
	rc, err := blobs.Open(ctx, f.SHA256)
	if err != nil {
		return nil, fmt.Errorf("open source record %s: %w", f.SHA256, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxSourceRecord+1))
	if err != nil {
		return nil, fmt.Errorf("read source record %s: %w", f.SHA256, err)
	}
	if len(data) > maxSourceRecord {
		return nil, fmt.Errorf("source record %s is larger than %d bytes", f.SHA256, maxSourceRecord)
	}
	var rec *marc.Record
	if f.MediaType == MediaMARCXML {
		rec, err = marc.NewXMLReader(bytes.NewReader(data)).Next()
	} else {
		rec, err = marc.NewReader(bytes.NewReader(data)).Next()
	}
	if err != nil {
		return nil, fmt.Errorf("parse source record %s: %w", f.SHA256, err)
	}
	return rec, nil
}
