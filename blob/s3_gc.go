package blob

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/shelfmark/shelfmark"
)

// farFuture is a storedBefore that every small blob passes.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// Walk calls fn with the SHA-256 (lower-case hex) of every stored blob: the
// objects under the prefix first (ListObjectsV2, 1,000 keys a request),
// then the small blobs (committed ones: not the deferred puts waiting for
// Sync). It stops at the first error fn returns and returns it.
func (s *S3Store) Walk(ctx context.Context, fn func(sha256 string) error) error {
	err := s.listObjects(ctx, func(o types.Object) error {
		if sha, ok := s.shaOfKey(aws.ToString(o.Key)); ok {
			return fn(sha)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.listSmall(ctx, farFuture, func(bs []shelfmark.SmallBlobInfo) error {
		for _, b := range bs {
			if err := fn(b.SHA256); err != nil {
				return err
			}
		}
		return nil
	})
}

// listObjects calls fn for every object under the prefix.
func (s *S3Store) listObjects(ctx context.Context, fn func(types.Object) error) error {
	var token *string
	for {
		var out *s3.ListObjectsV2Output
		err := s.call(ctx, "ListObjectsV2", func(ctx context.Context) (err error) {
			out, err = s.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: aws.String(s.prefix), ContinuationToken: token})
			return err
		})
		if err != nil {
			return s.fail(ctx, "ListObjectsV2", s.prefix, err)
		}
		for _, o := range out.Contents {
			if err := fn(o); err != nil {
				return err
			}
		}
		if !aws.ToBool(out.IsTruncated) || out.NextContinuationToken == nil {
			return nil
		}
		token = out.NextContinuationToken
	}
}

// listSmall calls fn with the small blobs stored before storedBefore, a
// page at a time.
func (s *S3Store) listSmall(ctx context.Context, storedBefore time.Time, fn func([]shelfmark.SmallBlobInfo) error) error {
	after := ""
	for {
		page, err := s.small.ListSmallBlobs(ctx, after, storedBefore, collectBatch)
		if err != nil {
			return fmt.Errorf("blob: s3: listing small blobs: %w", err)
		}
		if len(page) > 0 {
			if err := fn(page); err != nil {
				return err
			}
			after = page[len(page)-1].SHA256
		}
		if len(page) < collectBatch {
			return nil
		}
	}
}

// Collect removes the blobs no file refers to (refs decides) that were
// last stored more than opts.Grace ago, and aborts the multipart uploads a
// crash left unfinished more than an hour ago. opts.Grace must exceed the
// store's refresh age (a Put that finds its bytes stored leaves them be
// when they are younger than that). An object is checked again
// (HeadObject) right before it is deleted, so one stored again meanwhile
// stays; unlike LocalStore's rename aside, this leaves a window of one
// request in which a Put that refreshes the very object the collector is
// deleting loses its copy, which is why the grace period is a day.
func (s *S3Store) Collect(ctx context.Context, refs shelfmark.BlobReferences, opts CollectOptions) (CollectStats, error) {
	var st CollectStats
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	if opts.Grace <= s.refresh {
		return st, fmt.Errorf("blob: s3: collect: the grace period %s must be longer than the store's refresh age %s", opts.Grace, s.refresh)
	}
	cutoff := time.Now().Add(-opts.Grace)
	if !opts.DryRun {
		if err := s.abortStale(ctx, time.Now().Add(-tmpMaxAge)); err != nil {
			return st, err
		}
	}
	type candidate struct {
		sha  string
		size int64
	}
	var batch []candidate
	orphans := func() ([]candidate, error) {
		if len(batch) == 0 {
			return nil, nil
		}
		shas := make([]string, len(batch))
		for i, c := range batch {
			shas[i] = c.sha
		}
		used, err := refs.ReferencedBlobs(ctx, shas)
		if err != nil {
			return nil, fmt.Errorf("blob: s3: collect: %w", err)
		}
		var out []candidate
		for _, c := range batch {
			if !used[c.sha] {
				out = append(out, c)
				st.Orphans++
				st.Bytes += c.size
			}
		}
		batch = batch[:0]
		return out, nil
	}
	removeObjects := func() error {
		orph, err := orphans()
		if err != nil || opts.DryRun {
			return err
		}
		for _, c := range orph {
			removed, err := s.removeObject(ctx, c.sha, cutoff)
			if err != nil {
				return err
			}
			if removed {
				st.Removed++
			}
		}
		return nil
	}
	err := s.listObjects(ctx, func(o types.Object) error {
		sha, ok := s.shaOfKey(aws.ToString(o.Key))
		if !ok || o.LastModified == nil || !o.LastModified.Before(cutoff) {
			return nil
		}
		st.Examined++
		batch = append(batch, candidate{sha, aws.ToInt64(o.Size)})
		if len(batch) >= collectBatch {
			return removeObjects()
		}
		return nil
	})
	if err == nil {
		err = removeObjects()
	}
	if err != nil {
		return st, err
	}
	err = s.listSmall(ctx, cutoff, func(page []shelfmark.SmallBlobInfo) error {
		for _, b := range page {
			st.Examined++
			batch = append(batch, candidate{b.SHA256, b.Size})
		}
		orph, err := orphans()
		if err != nil || opts.DryRun || len(orph) == 0 {
			return err
		}
		shas := make([]string, len(orph))
		for i, c := range orph {
			shas[i] = c.sha
		}
		n, err := s.small.DeleteSmallBlobs(ctx, shas, cutoff)
		st.Removed += n
		if err != nil {
			return fmt.Errorf("blob: s3: collect: %w", err)
		}
		return nil
	})
	return st, err
}

// removeObject deletes the object of sha unless it was stored again since
// cutoff, and reports whether it did.
func (s *S3Store) removeObject(ctx context.Context, sha string, cutoff time.Time) (bool, error) {
	key := s.key(sha)
	out, err := s.head(ctx, key)
	if out == nil || err != nil {
		return false, err
	}
	if out.LastModified == nil || !out.LastModified.Before(cutoff) {
		return false, nil
	}
	err = s.call(ctx, "DeleteObject", func(ctx context.Context) error {
		_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key})
		return err
	})
	if err != nil && !notFoundErr(err) {
		return false, s.fail(ctx, "DeleteObject", key, err)
	}
	return true, nil
}

// abortStale aborts the multipart uploads under the prefix begun before
// cutoff: those of processes that died mid-upload.
func (s *S3Store) abortStale(ctx context.Context, cutoff time.Time) error {
	var keyMarker, idMarker *string
	for {
		var out *s3.ListMultipartUploadsOutput
		err := s.call(ctx, "ListMultipartUploads", func(ctx context.Context) (err error) {
			out, err = s.client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &s.bucket, Prefix: aws.String(s.prefix),
				KeyMarker: keyMarker, UploadIdMarker: idMarker})
			return err
		})
		if err != nil {
			return s.fail(ctx, "ListMultipartUploads", s.prefix, err)
		}
		for _, u := range out.Uploads {
			if u.Initiated == nil || !u.Initiated.Before(cutoff) {
				continue
			}
			err := s.call(ctx, "AbortMultipartUpload", func(ctx context.Context) error {
				_, err := s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &s.bucket, Key: u.Key, UploadId: u.UploadId})
				return err
			})
			if err != nil && !notFoundErr(err) {
				return s.fail(ctx, "AbortMultipartUpload", aws.ToString(u.Key), err)
			}
		}
		if !aws.ToBool(out.IsTruncated) {
			return nil
		}
		keyMarker, idMarker = out.NextKeyMarker, out.NextUploadIdMarker
	}
}
