package netguard

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"testing"
)

func TestAllowHost(t *testing.T) {
	tests := []struct {
		host string
		want []netip.Prefix
	}{
		{"127.0.0.1", []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}},
		{"[::1]", []netip.Prefix{netip.MustParsePrefix("::1/128")}},
		{"::ffff:10.0.0.1", []netip.Prefix{netip.MustParsePrefix("10.0.0.1/32")}},
		{"8.8.8.8", nil},
		{"169.254.169.254", nil}, // link-local (metadata): never allowed by name
		{"fe80::1", nil},
	}
	for _, tt := range tests {
		got, err := AllowHost(context.Background(), tt.host)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("AllowHost(%q) = %v, %v; want %v", tt.host, got, err, tt.want)
		}
	}
}

// A crawl of a site on loopback reaches the site, and nothing else that is
// not public.
func TestSiteTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	tr, err := SiteTransport(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: tr}
	resp, err := client.Get(srv.URL + "/")
	if err != nil {
		t.Fatalf("Get(the site) = %v, want it allowed", err)
	}
	resp.Body.Close()
	for _, other := range []string{"http://127.0.0.2:9/", "http://10.0.0.1:9/", "http://169.254.169.254/"} {
		if _, err := client.Get(other); !errors.Is(err, ErrForbidden) {
			t.Errorf("Get(%s) = %v, want ErrForbidden", other, err)
		}
	}
}
