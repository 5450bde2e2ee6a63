package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/robotsmw/robotsmw/internal/privatetest"
)

// A site's robots.txt names a "sitemap" on another loopback
// address, standing in for the machine's Redis or a metadata service. The
// walk never connects to it unless -allow-private is given.
func TestSitemapsRefusesPrivateAddresses(t *testing.T) {
	inner := privatetest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "http://127.0.0.2/admin")
	}))
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "Sitemap: %s/s.txt\n", inner.URL)
	}))
	defer site.Close()
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"sitemaps", "-walk", site.URL}, false},
		{[]string{"sitemaps", "-walk", "-allow-private", site.URL}, true},
	} {
		inner.Reset()
		var out, errOut bytes.Buffer
		run(context.Background(), tc.args, strings.NewReader(""), &out, &errOut, &http.Client{})
		if got := inner.Conns() > 0; got != tc.want {
			t.Errorf("run(%q): the internal server got %d requests, want any: %v; stderr %q", tc.args, inner.Conns(), tc.want, errOut.String())
		}
		if !tc.want && !strings.Contains(out.String()+errOut.String(), "loopback address") {
			t.Errorf("run(%q) output = %q, want the refused sitemap reported", tc.args, out.String()+errOut.String())
		}
	}
}

// A site on a loopback address reaches its own port only: its Sitemap line
// naming another port of its address, and a redirect there, stand in for
// the machine's Redis beside a dev site. Neither is connected to unless
// -allow-private is given.
func TestSitemapsRefusesOtherPortsOfTheSite(t *testing.T) {
	other := privatetest.New(t, http.NotFoundHandler())
	site := privatetest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "Sitemap: %s/other.xml\nSitemap: /away.txt\n", other.URL)
		case "/away.txt":
			http.Redirect(w, r, other.URL+"/redirected.txt", http.StatusFound)
		}
	}))
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"sitemaps", "-walk", site.URL}, false},
		{[]string{"sitemaps", "-walk", "-allow-private", site.URL}, true},
	} {
		other.Reset()
		var out, errOut bytes.Buffer
		run(context.Background(), tc.args, strings.NewReader(""), &out, &errOut, &http.Client{})
		if got := other.Conns() > 0; got != tc.want {
			t.Errorf("run(%q): the other port of the site's address got %d connections, want any: %v; stderr %q", tc.args, other.Conns(), tc.want, errOut.String())
		}
		all := out.String() + errOut.String()
		if !tc.want && strings.Count(all, "loopback address") < 2 {
			t.Errorf("run(%q) output = %q, want both refused sitemaps reported", tc.args, all)
		}
	}
}

// robotstxt serve on loopback allows the site its user typed, on that
// site's port only: a draft's Sitemap line naming another port of the
// site's address is refused, as the command line's sites are.
func TestServeSitemapsRefusesOtherPortsOfTheSite(t *testing.T) {
	other := privatetest.New(t, http.NotFoundHandler())
	site := privatetest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/own.txt" {
			fmt.Fprintf(w, "http://%s/page\n", r.Host)
			return
		}
		http.NotFound(w, r)
	}))
	s := testServer(false)
	s.listenHost = mustAddr(t, "127.0.0.1")
	draft := "Sitemap: " + other.URL + "/other.xml\nSitemap: /own.txt\n"
	var resp sitemapsResponse
	if code := postAPI(t, s.handler(), "/api/sitemaps", sitemapsRequest{Robots: draft, Base: site.URL}, &resp); code != http.StatusOK {
		t.Fatalf("POST /api/sitemaps = %d", code)
	}
	if resp.Sitemaps != 1 || resp.URLs != 1 || resp.Failed != 1 {
		t.Errorf("POST /api/sitemaps = %+v, want own.txt read and other.xml failed", resp)
	}
	for _, r := range resp.Reports {
		if strings.Contains(r.URL, "other.xml") && !strings.Contains(r.Error, "loopback address") {
			t.Errorf("POST /api/sitemaps: %s: %q, want it refused", r.URL, r.Error)
		}
	}
	if n := other.Conns(); n != 0 {
		t.Errorf("the other port of the site's address accepted %d connections, want 0", n)
	}
}
