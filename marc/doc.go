// Package marc reads and writes MARC 21 bibliographic records in ISO 2709
// ("transmission format", .mrc) and MARCXML, converts MARC-8 encoded
// records to Unicode, and maps records to simple (unqualified) Dublin Core.
//
// The package depends only on the Go standard library.
//
// # Reading ISO 2709
//
// [NewReader] returns a streaming [Reader]. Each call to [Reader.Next]
// reads exactly one record (at most 99,999 bytes, the largest length the
// leader can declare), so memory use is bounded whatever the size of the
// input. A malformed record yields a [*RecordError] carrying the record's
// 1-based position and byte offset; the reader then resynchronises and the
// next call continues with the following record. Only I/O errors end the
// stream; io.EOF marks its end. Bytes between records that are ASCII
// whitespace or NUL (for example a newline after each record) are skipped
// silently.
//
// Character encoding is decided by leader/09:
//
//   - 'a': the record is UTF-8. Invalid UTF-8 makes the record a
//     [*RecordError] (in lenient mode each invalid byte sequence is
//     replaced by U+FFFD instead). UTF-8 data is returned exactly as
//     stored: it is not normalised.
//   - anything else: the record is MARC-8. It is converted to UTF-8 using
//     the complete Library of Congress MARC-8 tables (including EACC),
//     honouring the G0/G1 escape sequences. MARC-8 combining marks precede
//     their base character, Unicode ones follow it, so they are moved after
//     the base; the result is then normalised to NFC (Unicode 14 data,
//     generated into nfc_table.go), which is what pymarc and most
//     catalogues produce. Leader/09 of the returned record is set to 'a'.
//     [Reader.Raw] still returns the original bytes.
//
// Escape sequences are interpreted per field (each field starts with G0 =
// Basic Latin and G1 = ANSEL). A malformed escape sequence, a truncated
// multibyte character or a character absent from the tables makes the
// record a [*RecordError]; in lenient mode the stray ESC byte is dropped and
// the other two become U+FFFD.
//
// By default the reader is strict: structural faults (bad record length,
// base address or directory, missing field or record terminators, invalid
// tags, indicators that are not exactly two printable ASCII characters,
// subfield codes that are not printable ASCII) and encoding faults all
// produce a [*RecordError]. Setting [Reader.Lenient] repairs what can be
// repaired the way pymarc does (missing indicators become blanks, surplus
// ones are dropped, a non-ASCII subfield code is replaced by its base
// letter, bad bytes become U+FFFD) and only rejects records whose structure
// cannot be recovered.
//
// # MARCXML
//
// [NewXMLReader] streams records out of a MARCXML document token by token,
// with or without the http://www.loc.gov/MARC21/slim namespace, in a
// <collection> or as a bare <record> (also nested in other XML such as an
// OAI-PMH response). [AppendXML] and [WriteXML] produce one
// <record xmlns="http://www.loc.gov/MARC21/slim"> element with
// deterministic bytes that validate against MARC21slim.xsd; see
// [AppendXML] for how values the schema does not allow are sanitised.
//
// # Dublin Core
//
// [DublinCore] maps a record to the fifteen simple Dublin Core elements
// following the Library of Congress stylesheet MARC21slim2OAIDC.xsl /
// MARC21slim2SRWDC.xsl (2008 revision) and, for the fields the stylesheet
// does not cover, the LoC "MARC to Dublin Core Crosswalk"
// (https://www.loc.gov/marc/marc2dc.html, unqualified section, 2008). See
// [DublinCore] for the details and the deliberate deviations.
package marc

//go:generate go run gen_tables.go
