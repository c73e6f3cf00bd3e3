package testkit

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/shelfmark/shelfmark/blob/s3test"
)

// S3Keys lists the objects under prefix.
func S3Keys(t *testing.T, srv *s3test.Server, bucket, prefix string) []string {
	t.Helper()
	out, err := s3test.Client(srv.Endpoint, s3test.AccessKey, s3test.SecretKey).ListObjectsV2(context.Background(),
		&s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	return keys
}
