package setup

import (
	"testing"

	shttp "github.com/shelfmark/shelfmark/http"
)

// TestUploadFlags: serve's upload limits reach the server's options, a
// flag left out keeps the server's default, and a bad value is refused.
func TestUploadFlags(t *testing.T) {
	cmd, c := ServeCommand()
	if err := cmd.Flags().Parse([]string{"--upload-quota", "2GiB", "--upload-quota-files", "50", "--bulk-max-unpacked", "1GiB", "--zip-max-ratio", "20", "--bulk-max-previews", "3"}); err != nil {
		t.Fatal(err)
	}
	var opts shttp.Options
	if err := c.uploads.apply(&opts); err != nil {
		t.Fatal(err)
	}
	if opts.UploadQuotaBytes != 2<<30 || opts.UploadQuotaFiles != 50 || opts.MaxBulkExpandBytes != 1<<30 || opts.MaxZipRatio != 20 ||
		opts.MaxBulkPreviews != 3 || opts.MaxBulkPreviewsPerUser != shttp.DefaultMaxBulkPreviewsPerUser ||
		opts.UploadQuotaTotalBytes != shttp.DefaultUploadQuotaTotalBytes || opts.MaxBulkUploadBytes != 0 {
		t.Errorf("options %+v", opts)
	}
	for _, args := range [][]string{{"--upload-quota", "lots"}, {"--zip-max-ratio", "-1"}} {
		cmd, c := ServeCommand()
		if err := cmd.Flags().Parse(args); err != nil {
			t.Fatal(err)
		}
		if err := c.uploads.apply(&shttp.Options{}); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}
