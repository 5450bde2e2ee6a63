package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/robotsmw/robotsmw/examples/internal/cmdline"
	"github.com/robotsmw/robotsmw/internal/redistest"
)

// TestShape: -h in the shape every example shares (Ctrl-C: TestInterrupt,
// which needs Redis).
func TestShape(t *testing.T) { cmdline.TestShape(t, run, "fleet", "agent", "") }

// TestInterrupt: Ctrl-C while a member crawls prints its report and exits
// 130.
func TestInterrupt(t *testing.T) {
	srv := redistest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/p3" {
			cancel() // Ctrl-C while the crawl runs
		}
		var i int
		fmt.Sscanf(r.URL.Path, "/p%d", &i)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<a href="/p%d">next</a>`, i+1)
	}))
	defer site.Close()
	var out, errOut bytes.Buffer
	code := run(ctx, []string{"-redis", srv.Addr, "-rate", "50", site.URL + "/p0"}, &out, &errOut)
	if code != 130 || errOut.String() != "fleet: interrupted\n" || !strings.Contains(out.String(), "interrupted: this member fetched") {
		t.Errorf("run after Ctrl-C = %d, stderr %q, stdout %q; want 130, \"fleet: interrupted\" and the report", code, errOut.String(), out.String())
	}
}
