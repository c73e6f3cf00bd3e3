package setup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/ocfl"
)

// BackupFS opens where backups are kept: a local directory (created if
// missing when create is set, else it must exist) or s3://bucket/prefix
// reached with the content store's --s3-* settings, its uploads spooled
// under spool.
func BackupFS(ctx context.Context, target string, content BlobFlags, spool string, create bool) (ocfl.FS, error) {
	if strings.HasPrefix(target, "s3://") {
		bucket, prefix, err := blob.ParseS3URL(target)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", target, err)
		}
		fsys, err := blob.NewS3FS(ctx, blob.S3Options{Bucket: bucket, Prefix: prefix, Endpoint: content.endpoint,
			PathStyle: content.pathStyle, Region: content.region, AccessKey: content.accessKey, SecretKey: content.secretKey,
			SpoolDir: spool, Timeout: content.timeout})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", target, err)
		}
		return fsys, nil
	}
	if target == "" || strings.Contains(target, "://") {
		return nil, fmt.Errorf("%q: a directory or s3://bucket/prefix", target)
	}
	if !create {
		if _, err := os.Stat(target); err != nil {
			return nil, fmt.Errorf("%s: %w", target, err)
		}
	}
	fsys, err := ocfl.NewDirFS(target)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", target, err)
	}
	return fsys, nil
}

// PreservationFS opens the preservation copy --preservation names, as
// serve does (default data/ocfl); nil when it is "off", or the default
// and data has none.
func PreservationFS(ctx context.Context, root, data string, content BlobFlags) (ocfl.FS, error) {
	if root == "" {
		if _, err := os.Stat(filepath.Join(data, "ocfl")); errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
	}
	p := preservationFlags{root: root}
	return p.fs(ctx, data, content)
}
