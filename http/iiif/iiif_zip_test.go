package iiif

import "testing"

// TestZipEntryName: a file's name in the archive is its page's number and
// its last path element, unique.
func TestZipEntryName(t *testing.T) {
	taken := map[string]bool{}
	for _, c := range []struct {
		page       int
		name, want string
	}{
		{1, "scan.tif", "0001-scan.tif"},
		{1, "scan.tif", "0001-scan-2.tif"},
		{1, "scan.tif", "0001-scan-3.tif"},
		{12, "../../etc/passwd", "0012-passwd"},
		{3, `C:\scans\p3.jpg`, "0003-p3.jpg"},
		{4, "", "0004-file"},
		{12345, "x", "12345-x"},
	} {
		if got := zipEntryName(c.page, c.name, taken); got != c.want {
			t.Errorf("%d %q: %q, want %q", c.page, c.name, got, c.want)
		}
	}
}
