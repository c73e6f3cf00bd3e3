// Package worker runs the background pipeline (rules R5, R6 in docs/design.md): a
// Runner claims jobs from the durable queue in the database, runs each
// under its queue's concurrency and time limits, and stores results,
// retries with backoff, or failures. The handlers identify formats
// (siegfried, in process), make derivatives and extract text (vipsthumbnail,
// pdftoppm, pdftotext as child processes, with pure-Go fallbacks), and run
// OCR (tesseract at idle CPU priority with OMP_THREAD_LIMIT=1).
package worker
