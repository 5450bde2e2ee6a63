package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// sizedSite serves a robots.txt listing an index of three sitemaps: old
// (index lastmod 2004), big (about 40 KB, 1,000 pages, lastmod 2020 and
// 2024) and small.
func sizedSite(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "Sitemap: /index.xml\n")
		case "/index.xml":
			fmt.Fprint(w, `<sitemapindex><sitemap><loc>/old.xml</loc><lastmod>2004-01-01</lastmod></sitemap>
<sitemap><loc>/big.xml</loc><lastmod>2025-01-01</lastmod></sitemap><sitemap><loc>/small.xml</loc></sitemap></sitemapindex>`)
		case "/old.xml":
			fmt.Fprint(w, "<urlset><url><loc>/old</loc></url></urlset>")
		case "/big.xml":
			fmt.Fprint(w, "<urlset>")
			for i := range 1000 {
				year := 2020
				if i%2 == 1 {
					year = 2024
				}
				fmt.Fprintf(w, "<url><loc>/p%d</loc><lastmod>%d-06-01</lastmod></url>\n", i, year)
			}
			fmt.Fprint(w, "</urlset>")
		case "/small.xml":
			fmt.Fprint(w, "<urlset><url><loc>/s</loc></url></urlset>")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestSitemapsSizeFlags: -warn-size reports the large sitemap and counts
// it in the summary, -max-size cuts it (a failed sitemap, "limit
// reached"), -since drops old pages and skips old index children; all
// need -walk; a SIZE must parse.
func TestSitemapsSizeFlags(t *testing.T) {
	srv := sizedSite(t)
	for _, tt := range []struct {
		args     []string
		code     int
		contains []string
	}{
		{[]string{"-walk", "-warn-size", "20KiB"}, 0, []string{
			"/big.xml is large: ", "KiB read, past -warn-size", "page URLs: 1002\n", "large sitemaps: 1 (past -warn-size)\n"}},
		{[]string{"-walk", "-warn-size", "0"}, 0, []string{"page URLs: 1002\n"}},
		{[]string{"-walk", "-max-size", "10KB"}, 1, []string{
			"failed sitemaps: 1\n", "/big.xml: limit reached: more than 10000 bytes"}},
		{[]string{"-walk", "-since", "2023-01-01"}, 0, []string{
			"page URLs: 501\n", "dropped URLs: 500 (filter 500)\n", "skipped sitemaps: 1 (filter 1)\n"}},
		{[]string{"-max-size", "1MB"}, 2, []string{"need -walk"}},
		{[]string{"-walk", "-max-size", "lots"}, 2, []string{`size "lots" is not a number of bytes`}},
		{[]string{"-walk", "-since", "yesterday"}, 2, []string{`date "yesterday" is neither 2006-01-02 nor RFC 3339`}},
	} {
		args := append(append([]string{"sitemaps"}, tt.args...), srv.URL)
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(""), &out, &errOut, srv.Client())
		all := out.String() + errOut.String()
		if code != tt.code {
			t.Errorf("run(%q) exit = %d, want %d: %s", args, code, tt.code, all)
		}
		for _, want := range tt.contains {
			if !strings.Contains(all, want) {
				t.Errorf("run(%q) printed %q, want it to contain %q", args, all, want)
			}
		}
		if tt.args[len(tt.args)-1] == "0" && strings.Contains(all, "large") {
			t.Errorf("run(%q) printed %q: -warn-size 0 reports nothing", args, all)
		}
	}
}

// A lineWriter counts the lines written to it and calls at once when n
// were.
type lineWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	n     int
	at    func()
	lines int
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	before := w.lines
	w.lines += bytes.Count(p, []byte("\n"))
	if before < w.n && w.lines >= w.n {
		w.at()
	}
	return w.buf.Write(p)
}

// TestSitemapsURLsStream: sitemaps -walk -urls prints the URLs of a large
// sitemap as it is read: interrupted (Ctrl-C) while the server still
// holds the end of the file, it has printed the pages read.
func TestSitemapsURLsStream(t *testing.T) {
	hold := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "Sitemap: /big.xml\n")
		case "/big.xml":
			fmt.Fprint(w, "<urlset>")
			for i := range 2500 {
				fmt.Fprintf(w, "<url><loc>/p%d</loc></url>\n", i)
			}
			w.(http.Flusher).Flush()
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		}
	}))
	defer srv.Close()
	defer close(hold)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &lineWriter{n: 1000, at: cancel}
	var errOut bytes.Buffer
	code := run(ctx, []string{"sitemaps", "-walk", "-urls", srv.URL}, strings.NewReader(""), out, &errOut, srv.Client())
	if code != exitInterrupted || out.lines < 1000 || !strings.HasPrefix(out.buf.String(), srv.URL+"/p0\n"+srv.URL+"/p1\n") {
		t.Errorf("sitemaps -walk -urls interrupted mid-file: exit %d, %d lines printed (stderr %q); want %d and the first 1000 pages",
			code, out.lines, errOut.String(), exitInterrupted)
	}
}
