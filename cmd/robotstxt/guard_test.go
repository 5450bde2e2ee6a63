package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// Issue 21: a site's robots.txt names a "sitemap" on another loopback
// address, standing in for the machine's Redis or a metadata service. The
// walk never connects to it unless -allow-private is given.
func TestSitemapsRefusesPrivateAddresses(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2 to listen on: %v", err)
	}
	var internal atomic.Int64
	inner := &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		internal.Add(1)
		fmt.Fprintln(w, "http://127.0.0.2/admin")
	})}}
	inner.Start()
	defer inner.Close()
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
		internal.Store(0)
		var out, errOut bytes.Buffer
		run(context.Background(), tc.args, strings.NewReader(""), &out, &errOut, &http.Client{})
		if got := internal.Load() > 0; got != tc.want {
			t.Errorf("run(%q): the internal server got %d requests, want any: %v; stderr %q", tc.args, internal.Load(), tc.want, errOut.String())
		}
		if !tc.want && !strings.Contains(out.String()+errOut.String(), "loopback address") {
			t.Errorf("run(%q) output = %q, want the refused sitemap reported", tc.args, out.String()+errOut.String())
		}
	}
}
