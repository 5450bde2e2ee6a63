package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/robotsmw/robotsmw/internal/privatetest"
)

// A site's robots.txt names a "sitemap" on another loopback
// address, standing in for the machine's Redis or a metadata service. By
// default the crawl never reaches it; -allow-private lifts the guard.
func TestPrivateAddressesRefused(t *testing.T) {
	inner := privatetest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "http://127.0.0.2/admin/delete?all=1")
	}))
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nAllow: /\nSitemap: %s/s.txt\n", inner.URL)
		default:
			fmt.Fprintf(w, `<html><body><a href="%s/secret">x</a></body></html>`, inner.URL)
		}
	}))
	defer site.Close()
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"-url", site.URL, "-rate", "100", "-v"}, false},
		{[]string{"-url", site.URL, "-rate", "100", "-v", "-allow-private"}, true},
	} {
		inner.Reset()
		var out, errOut bytes.Buffer
		if code := run(context.Background(), tc.args, &out, &errOut, false); code != 0 {
			t.Fatalf("run(%q) = %d: %s", tc.args, code, errOut.String())
		}
		if got := inner.Conns() > 0; got != tc.want {
			t.Errorf("run(%q): the internal server got %d requests, want any: %v", tc.args, inner.Conns(), tc.want)
		}
	}
}

// A site on a loopback address reaches its own port only: its Sitemap line,
// a link and a redirect that name another port of its address (standing in
// for the machine's Redis beside a dev site) are never connected to,
// through colly and the Guard, unless -allow-private is given.
func TestOtherPortsOfTheSiteRefused(t *testing.T) {
	other := privatetest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "http://127.0.0.2/admin/delete?all=1")
	}))
	site := privatetest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nAllow: /\nSitemap: %s/s.txt\n", other.URL)
		case "/away":
			http.Redirect(w, r, other.URL+"/secret", http.StatusFound)
		default:
			fmt.Fprintf(w, `<html><body><a href="%s/secret">x</a><a href="/away">y</a></body></html>`, other.URL)
		}
	}))
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"-url", site.URL, "-rate", "100", "-v"}, false},
		{[]string{"-url", site.URL, "-rate", "100", "-v", "-allow-private"}, true},
	} {
		other.Reset()
		var out, errOut bytes.Buffer
		if code := run(context.Background(), tc.args, &out, &errOut, false); code != 0 {
			t.Fatalf("run(%q) = %d: %s", tc.args, code, errOut.String())
		}
		if got := other.Conns() > 0; got != tc.want {
			t.Errorf("run(%q): the other port of the site's address accepted %d connections, want any: %v", tc.args, other.Conns(), tc.want)
		}
	}
}
