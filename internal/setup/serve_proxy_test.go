package setup

import (
	"net/netip"
	"reflect"
	"testing"
)

// TestTrustedProxiesFlag reads --trusted-proxy values: addresses,
// networks and comma-separated lists (as the environment gives them), and
// refuses anything else with the flag's name.
func TestTrustedProxiesFlag(t *testing.T) {
	got, err := trustedProxies([]string{"10.0.0.5", "192.168.1.7/24, ::1", ""})
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.5/32"), netip.MustParsePrefix("192.168.1.0/24"), netip.MustParsePrefix("::1/128")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, bad := range []string{"haproxy", "10.0.0.0/33", "10.0.0.5:80"} {
		if _, err := trustedProxies([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
