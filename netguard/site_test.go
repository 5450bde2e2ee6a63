package netguard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/robotsmw/robotsmw/internal/privatetest"
)

func TestAllowSite(t *testing.T) {
	ap := netip.MustParseAddrPort
	tests := []struct {
		site string
		want []netip.AddrPort
	}{
		{"http://127.0.0.1:8080/", []netip.AddrPort{ap("127.0.0.1:8080")}},
		{"http://127.0.0.1/", []netip.AddrPort{ap("127.0.0.1:80")}},     // http's default port
		{"http://127.0.0.1:80/x", []netip.AddrPort{ap("127.0.0.1:80")}}, // the same site
		{"https://127.0.0.1/", []netip.AddrPort{ap("127.0.0.1:443")}},   // https's
		{"https://[::1]:8443/robots.txt", []netip.AddrPort{ap("[::1]:8443")}},
		{"http://[::ffff:10.0.0.1]/", []netip.AddrPort{ap("10.0.0.1:80")}},
		{"http://127.0.0.2./", []netip.AddrPort{ap("127.0.0.2:80")}},
		{"http://8.8.8.8/", nil},
		{"http://169.254.169.254/", nil}, // link-local (metadata): never allowed by name
		{"https://[fe80::1]/", nil},
		{"http://[64:ff9b::a9fe:a9fe]/", nil}, // 169.254.169.254 inside NAT64, as DNS64 answers
		{"http://[2002:a9fe:a9fe::1]/", nil},  // and inside 6to4
		{"http://[64:ff9b::7f00:1]/", []netip.AddrPort{ap("[64:ff9b::7f00:1]:80")}},
	}
	for _, tt := range tests {
		got, err := AllowSite(context.Background(), tt.site)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("AllowSite(%q) = %v, %v; want %v", tt.site, got, err, tt.want)
		}
	}
	for _, bad := range []string{"127.0.0.1", "ftp://127.0.0.1/", "http:///x", "http://127.0.0.1:0/", "http://127.0.0.1:70000/"} {
		if got, err := AllowSite(context.Background(), bad); err == nil {
			t.Errorf("AllowSite(%q) = %v, nil; want an error", bad, got)
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

// A site on a loopback address reaches its own port only: not another
// service on the same address, neither by a URL that names it nor by a
// redirect to it.
func TestSiteTransportOnlyTheSitesPort(t *testing.T) {
	other := privatetest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "another service of the site's address")
	}))
	site := privatetest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/away" {
			http.Redirect(w, r, other.URL+"/admin", http.StatusFound)
		}
	}))
	tr, err := SiteTransport(context.Background(), site.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	resp, err := client.Get(site.URL + "/")
	if err != nil {
		t.Fatalf("Get(%s/) = %v, want the site reached", site.URL, err)
	}
	resp.Body.Close()
	for _, u := range []string{other.URL + "/other.xml", site.URL + "/away"} {
		_, err := client.Get(u)
		var ae *AddressError
		if !errors.As(err, &ae) {
			t.Errorf("Get(%s) = %v, want an *AddressError", u, err)
			continue
		}
		if want := strings.TrimPrefix(other.URL, "http://"); ae.Host != want || ae.Reason != "loopback" {
			t.Errorf("Get(%s): AddressError %+v, want host %s refused as loopback", u, ae, want)
		}
		if _, port, _ := strings.Cut(strings.TrimPrefix(site.URL, "http://"), ":"); !strings.Contains(err.Error(), "only port "+port+" is allowed") {
			t.Errorf("Get(%s) = %q, want the message to name the site's port %s", u, err, port)
		}
	}
	if n := other.Conns(); n != 0 {
		t.Errorf("the other service on the site's address accepted %d connections, want 0", n)
	}
}

// Without a port, the site's port is its scheme's: a Dialer that allows
// http://127.0.0.2/ allows 127.0.0.2:80 and not 127.0.0.2 on a port a test
// server has.
func TestAllowSiteDefaultPort(t *testing.T) {
	srv := privatetest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for _, site := range []string{"http://127.0.0.2/", "https://127.0.0.2/"} {
		allow, err := AllowSite(context.Background(), site)
		if err != nil {
			t.Fatal(err)
		}
		d := &Dialer{AllowAddrPorts: allow}
		if _, err := d.DialContext(context.Background(), "tcp", srv.Listener.Addr().String()); !errors.Is(err, ErrForbidden) {
			t.Errorf("AllowSite(%q) allows a dial to %s: %v", site, srv.Listener.Addr(), err)
		}
	}
	if n := srv.Conns(); n != 0 {
		t.Errorf("the server accepted %d connections, want 0", n)
	}
}
