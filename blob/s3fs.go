package blob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ocfl"
)

// S3FS is an ocfl.FS over an S3-compatible bucket: the file name is the
// object Prefix/name, and a directory is a key prefix that exists while a
// key lies under it. Every Write is one PutObject (a multipart upload past
// PartSize), so a file appears whole or not at all and is durable when
// Write returns; an exclusive Write is a conditional PutObject
// (If-None-Match: *). It has no locks (ocfl.Locker): run one process that
// writes a storage root on S3 at a time (the elected preserver is one).
//
// Cost: ReadDir one ListObjectsV2 per thousand entries; Open one
// GetObject; Write the bytes spooled to a local file (for the SHA-256 the
// request is signed with) and one PutObject; RemoveAll one listing and
// one DeleteObjects per thousand keys.
type S3FS struct {
	s *S3Store
}

var _ ocfl.FS = (*S3FS)(nil)

// NewS3FS returns the FS of opts.Bucket under opts.Prefix (opts.Small is
// not used) and checks that the bucket answers.
func NewS3FS(ctx context.Context, opts S3Options) (*S3FS, error) {
	opts.Small = nil
	s, err := newS3(ctx, opts)
	if err != nil {
		return nil, err
	}
	s.role = "S3 store of the preservation copy"
	return &S3FS{s: s}, nil
}

// Ready reports whether the bucket answers (one HeadBucket).
func (f *S3FS) Ready(ctx context.Context) error { return f.s.Ready(ctx) }

// key is the object key of the file name; dirKey the prefix of the
// directory name ("." is the root), ending in "/" unless empty.
func (f *S3FS) key(name string) (string, error) {
	if name == "" || name == "." || path.Clean(name) != name || strings.HasPrefix(name, "/") ||
		name == ".." || strings.HasPrefix(name, "../") || strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("blob: s3: path %q is not a clean relative path", name)
	}
	return f.s.prefix + name, nil
}

func (f *S3FS) dirKey(dir string) (string, error) {
	if dir == "." || dir == "" {
		return f.s.prefix, nil
	}
	k, err := f.key(dir)
	if err != nil {
		return "", err
	}
	return k + "/", nil
}

// ReadDir implements ocfl.FS.
func (f *S3FS) ReadDir(ctx context.Context, dir string) ([]ocfl.Entry, error) {
	prefix, err := f.dirKey(dir)
	if err != nil {
		return nil, err
	}
	var out []ocfl.Entry
	pages := s3.NewListObjectsV2Paginator(f.s.client, &s3.ListObjectsV2Input{Bucket: &f.s.bucket,
		Prefix: aws.String(prefix), Delimiter: aws.String("/")})
	for pages.HasMorePages() {
		var page *s3.ListObjectsV2Output
		err := f.s.call(ctx, "ListObjectsV2", func(ctx context.Context) (err error) {
			page, err = pages.NextPage(ctx)
			return err
		})
		if err != nil {
			return nil, f.s.fail(ctx, "ListObjectsV2", prefix, err)
		}
		for _, p := range page.CommonPrefixes {
			name := strings.TrimSuffix(strings.TrimPrefix(aws.ToString(p.Prefix), prefix), "/")
			if name != "" {
				out = append(out, ocfl.Entry{Name: name, Dir: true})
			}
		}
		for _, o := range page.Contents {
			if name := strings.TrimPrefix(aws.ToString(o.Key), prefix); name != "" {
				out = append(out, ocfl.Entry{Name: name})
			}
		}
	}
	if len(out) == 0 && dir != "." && dir != "" {
		return nil, fmt.Errorf("blob: s3: %s: %w", dir, fs.ErrNotExist)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Open implements ocfl.FS. The body is bounded by the reader, not by the
// request timeout.
func (f *S3FS) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	key, err := f.key(name)
	if err != nil {
		return nil, err
	}
	out, err := f.s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &f.s.bucket, Key: &key})
	if notFoundErr(err) {
		return nil, fmt.Errorf("blob: s3: %s: %w", name, fs.ErrNotExist)
	}
	if err != nil {
		return nil, f.s.fail(ctx, "GetObject", key, err)
	}
	return out.Body, nil
}

// Write implements ocfl.FS. An exclusive write is refused past PartSize
// (a conditional multipart upload is not portable); OCFL writes only
// inventories exclusively.
func (f *S3FS) Write(ctx context.Context, name string, r io.Reader, exclusive bool) error {
	key, err := f.key(name)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(f.s.spool, tmpPrefix+"*")
	if err != nil {
		return full(fmt.Errorf("blob: s3: creating a spool file: %w", err))
	}
	defer func() {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
	}()
	h := sha256.New()
	size, err := spool(ctx, tmp, r, 0, []namedHash{{alg: shelfmark.SHA256, h: h}})
	if err != nil {
		return full(err)
	}
	switch {
	case size <= f.s.part:
		return f.s.putObjectAt(ctx, key, hex.EncodeToString(h.Sum(nil)), tmp, size, exclusive)
	case exclusive:
		return fmt.Errorf("blob: s3: %s: an exclusive write of %d bytes is larger than a part (%d)", name, size, f.s.part)
	}
	return f.s.putMultipartAt(ctx, key, tmp, size)
}

// RemoveAll implements ocfl.FS: the object name and every object under
// name/.
func (f *S3FS) RemoveAll(ctx context.Context, name string) error {
	key, err := f.key(name)
	if err != nil {
		return err
	}
	keys := []string{key}
	pages := s3.NewListObjectsV2Paginator(f.s.client, &s3.ListObjectsV2Input{Bucket: &f.s.bucket, Prefix: aws.String(key + "/")})
	for pages.HasMorePages() {
		var page *s3.ListObjectsV2Output
		err := f.s.call(ctx, "ListObjectsV2", func(ctx context.Context) (err error) {
			page, err = pages.NextPage(ctx)
			return err
		})
		if err != nil {
			return f.s.fail(ctx, "ListObjectsV2", key, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		ids := make([]types.ObjectIdentifier, n)
		for i, k := range keys[:n] {
			ids[i] = types.ObjectIdentifier{Key: aws.String(k)}
		}
		keys = keys[n:]
		var out *s3.DeleteObjectsOutput
		err := f.s.call(ctx, "DeleteObjects", func(ctx context.Context) (err error) {
			out, err = f.s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: &f.s.bucket,
				Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
			return err
		})
		if err != nil {
			return f.s.fail(ctx, "DeleteObjects", key, err)
		}
		for _, e := range out.Errors {
			if aws.ToString(e.Code) != "NoSuchKey" {
				return fmt.Errorf("blob: s3: remove %s: %s: %s", aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message))
			}
		}
	}
	return nil
}
