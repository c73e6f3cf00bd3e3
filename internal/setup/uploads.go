package setup

import (
	"fmt"

	"github.com/spf13/pflag"

	shttp "github.com/shelfmark/shelfmark/http"
)

// uploadFlags are serve's limits on the bytes users send before a work
// names them: quotas, and the bounds of a bulk ingest's upload and zip.
type uploadFlags struct {
	quota, quotaTotal, bulkUpload, bulkUnpacked string
	quotaFiles, zipRatio                        int64
	previews, userPreviews                      int
}

func (u *uploadFlags) register(f *pflag.FlagSet) {
	f.StringVar(&u.quota, "upload-quota", "32GiB", "the most a user may hold that no work names yet (files sent to /api/v1/blobs or the deposit form not yet deposited, kept a day at most, and bulk ingests staged for a preview); past it uploads are refused with 507 (code quota)")
	f.Int64Var(&u.quotaFiles, "upload-quota-files", shttp.DefaultUploadQuotaFiles, "the most uploads a user may hold that no work names yet; past it uploads are refused with 507 (code quota)")
	f.StringVar(&u.quotaTotal, "upload-quota-total", "128GiB", "the most all users together may hold that no work names yet (uploads, and the bulk ingests this server stages); past it uploads are refused with 507 (code quota)")
	f.StringVar(&u.bulkUpload, "bulk-max-upload", "", "the largest upload of a web bulk ingest (manifest and zip together); default: --max-upload; past it 413")
	f.StringVar(&u.bulkUnpacked, "bulk-max-unpacked", "", "the most a web bulk ingest's zip may unpack to; default: twice --bulk-max-upload; past it 413")
	f.Int64Var(&u.zipRatio, "zip-max-ratio", shttp.DefaultMaxZipRatio, "the most a web bulk ingest's zip, and each of its entries, may expand (unpacked size over compressed size, judged beyond 1 MiB, by the sizes the zip declares and by the bytes unpacked); past it 413")
	f.IntVar(&u.previews, "bulk-max-previews", shttp.DefaultMaxBulkPreviews, "the most web bulk ingests this server keeps staged (being checked, or previews waiting to be started); past it uploads are refused with 507 (code quota)")
	f.IntVar(&u.userPreviews, "bulk-max-previews-per-user", shttp.DefaultMaxBulkPreviewsPerUser, "the most previews of web bulk ingests a user keeps staged; a new upload discards the user's oldest")
}

// apply sets the limits on opts; a limit left empty or 0 (a config made
// without the flags) keeps the server's default.
func (u *uploadFlags) apply(opts *shttp.Options) error {
	for _, s := range []struct {
		flag, value string
		to          *int64
	}{{"--upload-quota", u.quota, &opts.UploadQuotaBytes}, {"--upload-quota-total", u.quotaTotal, &opts.UploadQuotaTotalBytes},
		{"--bulk-max-upload", u.bulkUpload, &opts.MaxBulkUploadBytes}, {"--bulk-max-unpacked", u.bulkUnpacked, &opts.MaxBulkExpandBytes}} {
		if s.value == "" {
			continue
		}
		n, err := ParseSize(s.value)
		if err != nil {
			return fmt.Errorf("%s: %w", s.flag, err)
		}
		*s.to = n
	}
	for _, n := range []struct {
		flag  string
		value int64
	}{{"--upload-quota-files", u.quotaFiles}, {"--zip-max-ratio", u.zipRatio}, {"--bulk-max-previews", int64(u.previews)}, {"--bulk-max-previews-per-user", int64(u.userPreviews)}} {
		if n.value < 0 {
			return fmt.Errorf("%s must be at least 1, not %d", n.flag, n.value)
		}
	}
	opts.UploadQuotaFiles, opts.MaxZipRatio = u.quotaFiles, u.zipRatio
	opts.MaxBulkPreviews, opts.MaxBulkPreviewsPerUser = u.previews, u.userPreviews
	return nil
}
