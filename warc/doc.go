// Package warc reads and writes WARC files (ISO 28500, versions 1.0 and
// 1.1), the web archive format, for Shelfmark's web index.
//
// Reader walks a file record by record and returns each as a
// shelfmark.WebRecord: where it is (offset and length in the file), what
// it captured (canonical target URL and SURT, time, media type, status,
// payload digest) and, for HTML responses and Common Crawl WAT metadata,
// the page's outbound links.
//
// Decisions:
//
//   - Framing is done here, parsing by gowarc. A gzipped file must hold one
//     record per gzip member (as the standard recommends and crawlers
//     write); the member is decompressed through a byte reader so its
//     compressed length is exact. A plain record's end is its header plus
//     Content-Length plus CRLFCRLF, checked before the record is parsed.
//     Offsets and lengths are those warcio (and so pywb) reports: a gzip
//     member's compressed length, or for a plain file the record without
//     its closing CRLFCRLF (Reader.Offset is past it).
//     github.com/nlnwa/gowarc parses the header and the HTTP block, with
//     its validation off and nothing "fixed", so what is indexed is what
//     the file says.
//   - A bad record is a *RecordError with its offset, and the Reader goes
//     on: after a gzip member that decompressed cleanly at its end, else at
//     the next gzip member that decompresses to "WARC/1." (gzip) or the next
//     line starting "WARC/1." or whole "WARC/1.0"/"WARC/1.1" line, which may
//     follow a truncated record mid-line (plain). A Content-Length that does not
//     match the record's end, a truncated or corrupt member, a missing
//     WARC-Target-URI where the type needs one, a bad WARC-Date and broken
//     WAT JSON are all such errors. Whitespace or NULs between records are
//     skipped silently.
//   - Memory stays flat: the block is streamed past, and only its first
//     Options.MaxLinkBytes (plus the HTTP header) are kept, in one reused
//     buffer, for link extraction. gowarc holds the blocks it parses in
//     memory, so it parses only the HTTP header of a response (when it
//     ends within 64 KiB) and revisit blocks up to 64 KiB; every other
//     block it streams past unparsed. The payload digest is taken as
//     written, not recomputed.
//   - Canonical follows the Internet Archive's surt library (the python
//     package pywb uses) for the SURT, including its quirks: "www" and
//     "www2." prefixes dropped, path and query lowercased, query arguments
//     sorted, a trailing slash dropped, session ids stripped.
//   - Targets with another scheme (dns:, ftp:) are returned with an empty
//     Target, as warcinfo records are; the caller skips them.
//   - Links are read with golang.org/x/net/html's tokenizer (no DOM): the
//     href of <a> and <area>, resolved against the document's <base href>
//     if any, else the page URL. Repeats are kept; the index makes links a
//     set per page.
//
// OpenRecord reads one record in place for replay, and Writer generates
// test and benchmark crawls (WriteBad writes each kind of bad record the
// Reader reports).
package warc
