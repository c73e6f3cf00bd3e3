package worker

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"strings"

	"github.com/shelfmark/shelfmark"
)

// Identifier identifies a file's format in process (package siegfried).
type Identifier interface {
	Identify(ctx context.Context, r io.ReadSeeker, name string, size int64) (*shelfmark.Format, error)
}

// Derivative sizes, in pixels along the longer side.
const (
	ThumbnailSize = 400
	AccessSize    = 1600
	// MaxTextBytes caps the text kept for search from one file.
	MaxTextBytes = 4 << 20
)

// Pipeline holds the handlers of the four queues.
type Pipeline struct {
	Repo     *shelfmark.Repository
	Blobs    shelfmark.BlobStore
	Identify Identifier
	Tools    Tools
}

// Handlers returns the pipeline's handlers by queue name.
func (p *Pipeline) Handlers() map[string]Handler {
	return map[string]Handler{
		shelfmark.QueueCharacterize: p.characterize,
		shelfmark.QueueDerive:       p.derive,
		shelfmark.QueueText:         p.text,
		shelfmark.QueueOCR:          p.ocr,
	}
}

// jobFile is the file a job works on, with the file set and work that
// hold it.
type jobFile struct {
	key     int64
	file    *shelfmark.File
	fileset int64
	work    int64
}

func (p *Pipeline) load(ctx context.Context, job *shelfmark.Job, withWork bool) (*jobFile, error) {
	f, fileset, err := p.Repo.FindFile(ctx, job.Resource)
	if err != nil {
		if shelfmark.ErrorCode(err) == shelfmark.EINVALID {
			return nil, Permanent(err)
		}
		return nil, err
	}
	jf := &jobFile{key: job.Resource, file: f, fileset: fileset}
	if withWork && fileset != 0 {
		if jf.work, err = p.Repo.Parent(ctx, fileset); err != nil {
			return nil, err
		}
	}
	return jf, nil
}

// mediaType is the identified media type, or the declared one.
func (jf *jobFile) mediaType() string {
	if f := jf.file.Format; f.Known() && f.MediaType != "" {
		mt, _, _ := strings.Cut(f.MediaType, ",") // siegfried may list several
		return strings.TrimSpace(mt)
	}
	mt, _, err := mime.ParseMediaType(jf.file.MediaType)
	if err != nil {
		return jf.file.MediaType
	}
	return mt
}

// characterize identifies the file and enqueues what its format calls for.
func (p *Pipeline) characterize(ctx context.Context, job *shelfmark.Job) (*shelfmark.JobResult, error) {
	jf, err := p.load(ctx, job, false)
	if err != nil {
		return nil, err
	}
	rc, err := p.Blobs.Open(ctx, jf.file.SHA256)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", jf.file.Name, err)
	}
	defer rc.Close()
	f, err := p.Identify.Identify(ctx, rc, jf.file.Name, jf.file.Size)
	if err != nil {
		return nil, fmt.Errorf("identify %s: %w", jf.file.Name, err)
	}
	jf.file.Format = f
	return &shelfmark.JobResult{Format: f, Next: NextQueues(jf.file, jf.mediaType())}, nil
}

// NextQueues says which jobs follow the characterization of a file of the
// given media type: derivatives for images and PDFs, text for PDFs, XML
// and plain text, OCR for images. Source records (MARC) get none: their
// metadata is already indexed.
func NextQueues(f *shelfmark.File, mediaType string) []string {
	if f.Use == shelfmark.UseSource {
		return nil
	}
	switch {
	case isImage(mediaType):
		return []string{shelfmark.QueueDerive, shelfmark.QueueOCR}
	case mediaType == "application/pdf":
		return []string{shelfmark.QueueDerive, shelfmark.QueueText}
	case isText(mediaType):
		return []string{shelfmark.QueueText}
	}
	return nil
}

func isImage(mt string) bool {
	switch mt {
	case "image/jpeg", "image/png", "image/tiff", "image/gif", "image/bmp", "image/webp", "image/jp2", "image/jpx":
		return true
	}
	return false
}

func isText(mt string) bool {
	return strings.HasPrefix(mt, "text/") || mt == "application/xml" || strings.HasSuffix(mt, "+xml")
}

// localPath returns a path to the file's bytes for a child process: the
// blob's own file when the store keeps one, else a temporary copy that
// cleanup removes.
func (p *Pipeline) localPath(ctx context.Context, f *shelfmark.File) (path string, cleanup func(), err error) {
	rc, err := p.Blobs.Open(ctx, f.SHA256)
	if err != nil {
		return "", nil, fmt.Errorf("open %s: %w", f.Name, err)
	}
	if osf, ok := rc.(*os.File); ok {
		return osf.Name(), func() { rc.Close() }, nil
	}
	defer rc.Close()
	tmp, err := os.CreateTemp(p.Tools.TempDir, "shelfmark-job-*"+filepath.Ext(filepath.Base(f.Name)))
	if err != nil {
		return "", nil, fmt.Errorf("copy %s for a tool: %w", f.Name, err)
	}
	if _, err := io.Copy(tmp, rc); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", nil, fmt.Errorf("copy %s for a tool: %w", f.Name, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return "", nil, fmt.Errorf("copy %s for a tool: %w", f.Name, err)
	}
	return tmp.Name(), func() { os.Remove(tmp.Name()) }, nil
}

// withLocalFile loads the job's file (with its work, when asked) and
// calls fn with a local path to its bytes, removed afterwards if it was a
// copy.
func (p *Pipeline) withLocalFile(ctx context.Context, job *shelfmark.Job, withWork bool, fn func(jf *jobFile, path string) (*shelfmark.JobResult, error)) (*shelfmark.JobResult, error) {
	jf, err := p.load(ctx, job, withWork)
	if err != nil {
		return nil, err
	}
	path, cleanup, err := p.localPath(ctx, jf.file)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	return fn(jf, path)
}

// store puts a derivative's bytes in the blob store and describes it.
func (p *Pipeline) store(ctx context.Context, data []byte, name, mediaType, use string) (*shelfmark.File, error) {
	return p.put(ctx, bytes.NewReader(data), name, mediaType, use)
}

// put streams a derivative into the blob store and describes it.
func (p *Pipeline) put(ctx context.Context, r io.Reader, name, mediaType, use string) (*shelfmark.File, error) {
	blob, err := p.Blobs.Put(ctx, r, shelfmark.PutOptions{})
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", name, err)
	}
	return &shelfmark.File{Name: name, MediaType: mediaType, Size: blob.Size, SHA256: blob.Digests[shelfmark.SHA256], Use: use}, nil
}

// baseName is the file's name without its extension, for derivatives.
func baseName(f *shelfmark.File) string {
	b := shelfmark.SafeFileName(f.Name, 32) // room for ".thumbnail.jpg" and the like
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// derive makes a thumbnail and an access copy.
func (p *Pipeline) derive(ctx context.Context, job *shelfmark.Job) (*shelfmark.JobResult, error) {
	return p.withLocalFile(ctx, job, false, func(jf *jobFile, path string) (*shelfmark.JobResult, error) {
		return p.deriveFile(ctx, jf, path)
	})
}

func (p *Pipeline) deriveFile(ctx context.Context, jf *jobFile, path string) (*shelfmark.JobResult, error) {
	mt := jf.mediaType()
	pd, err := p.Tools.derivePage(ctx, path, mt)
	if err != nil {
		return nil, fmt.Errorf("derivatives of %s: %w", jf.file.Name, err)
	}
	defer pd.Close()
	thumb, access, pyr := pd.thumb, pd.access, pd.tiles
	res := &shelfmark.JobResult{}
	for _, d := range []struct {
		d   *Derivative
		use string
	}{{thumb, shelfmark.UseThumbnail}, {access, shelfmark.UseAccess}} {
		name := baseName(jf.file) + "." + d.use + extension(d.d.MediaType)
		f, err := p.store(ctx, d.d.Data, name, d.d.MediaType, d.use)
		if err != nil {
			return nil, err
		}
		res.Derivatives = append(res.Derivatives, f)
	}
	if mt == "application/pdf" && p.Tools.Vips != "" && p.Tools.Pdftoppm != "" {
		// deep zoom into each page
		if pyr, err = p.Tools.PDFTiles(ctx, path); err != nil {
			return nil, fmt.Errorf("tiles of %s: %w", jf.file.Name, err)
		}
		defer pyr.Close()
	}
	if pyr == nil {
		return res, nil // no deep zoom: viewers show the access copy
	}
	f, err := p.storeFile(ctx, pyr.Path, baseName(jf.file)+".tiles.zip", "application/zip", shelfmark.UseTiles)
	if err != nil {
		return nil, err
	}
	res.Derivatives = append(res.Derivatives, f)
	return res, nil
}

// storeFile puts a derivative written to a local file in the blob store.
func (p *Pipeline) storeFile(ctx context.Context, path, name, mediaType, use string) (*shelfmark.File, error) {
	r, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", name, err)
	}
	defer r.Close()
	return p.put(ctx, r, name, mediaType, use)
}

func extension(mediaType string) string {
	switch mediaType {
	case "image/jpeg":
		return ".jpg"
	case "image/png":
		return ".png"
	case "text/plain; charset=utf-8", "text/plain":
		return ".txt"
	}
	return ""
}

// textResult keeps text as a derivative (or keeps extra, the hOCR) and as
// the search document of the file's page.
func (p *Pipeline) textResult(ctx context.Context, jf *jobFile, text string, extra *shelfmark.File) (*shelfmark.JobResult, error) {
	res := &shelfmark.JobResult{}
	if extra != nil {
		res.Derivatives = append(res.Derivatives, extra)
	} else if strings.TrimSpace(text) != "" {
		f, err := p.store(ctx, []byte(text), baseName(jf.file)+".txt", "text/plain; charset=utf-8", shelfmark.UseText)
		if err != nil {
			return nil, err
		}
		res.Derivatives = append(res.Derivatives, f)
	}
	if strings.TrimSpace(text) == "" || jf.work == 0 {
		return res, nil
	}
	format := ""
	if jf.file.Format.Known() {
		format = jf.file.Format.Name
	}
	res.Docs = []shelfmark.SearchDoc{{Key: jf.fileset, Work: jf.work, Kind: shelfmark.KindFileSet, Format: format, Body: text}}
	return res, nil
}
