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
