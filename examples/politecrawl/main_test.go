package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// TestDemo runs the command as the README's first command does and checks
// its report: every kind of outcome the demo site provokes is there.
func TestDemo(t *testing.T) {
	for _, tty := range []bool{false, true} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), nil, &out, &errOut, tty); code != 0 {
			t.Fatalf("run(tty=%v) = %d, want 0; stderr:\n%s", tty, code, errOut.String())
		}
		report := out.String()
		for _, want := range []string{
			"pages fetched                                  12",
			"blocked by robots.txt                           5",
			"links not followed (nofollow)                   3",
			"pages that say noindex                          1",
			"back-offs (429/503, retried later)              2",
			"gave up                                         0",
			"/login (on /): rel=\"nofollow\"",
			"/forum/thread-1 (on /forum/): page says nofollow (meta robots)",
			`/files/report.pdf: disallowed by line 8: disallow: /*.pdf$ (group "PoliteCrawl")`,
			`/blog/3?sessionid=42: disallowed by line 7: disallow: /*?sessionid= (group "PoliteCrawl")`,
			`/private/team: disallowed by line 5: disallow: /private/ (group "PoliteCrawl") (redirected from /old-team)`,
			"/shop/: 503 Service Unavailable, Retry-After: 1; host paused, retry 1 in 1s",
			"/sitemap-pages.xml.gz: 5 pages",
			"/private/sitemap-drafts.xml: disallowed by robots.txt, not fetched",
			"12 page URLs listed: 9 handed to the crawl",
			"left out: 1 duplicate, 1 disallowed, 1 out of scope",
		} {
			if !strings.Contains(report, want) {
				t.Errorf("run(tty=%v) report lacks %q; report:\n%s", tty, want, report)
			}
		}
		if strings.Contains(report, "elsewhere.example") {
			t.Errorf("run(tty=%v) contacted the off-site host of the sitemap:\n%s", tty, report)
		}
	}
}

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-h"}, 0, "usage: politecrawl [flags]\n\nCrawls"},
		{[]string{"-url", "ftp://x/"}, 2, `-url "ftp://x/" is not an http or https URL with a host` + "\n"},
		{[]string{"-url", "example.com"}, 2, `-url "example.com" is not an http or https URL`},
		{[]string{"-url", "http://127.0.0.1:1"}, 2, "cannot be reached"},
		{[]string{"stray"}, 2, `unexpected argument "stray"`},
		{[]string{"-rate", "-1"}, 2, "must not be negative"},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), tc.args, &out, &errOut, false)
		if code != tc.code || !strings.Contains(out.String()+errOut.String(), tc.msg) {
			t.Errorf("run(%q) = %d, stderr %q; want %d and %q", tc.args, code, errOut.String(), tc.code, tc.msg)
		}
	}
}

// cancelOnWrite cancels a context at the first write that holds a word.
type cancelOnWrite struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	word   string
	cancel context.CancelFunc
}

func (w *cancelOnWrite) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if bytes.Contains(p, []byte(w.word)) {
		w.cancel()
	}
	return w.buf.Write(p)
}

// TestInterrupt: Ctrl-C during the crawl prints the report, counts what was
// not sent as cancelled (not "gave up") and exits 130.
func TestInterrupt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &cancelOnWrite{word: "fetched   /", cancel: cancel}
	var errOut bytes.Buffer
	code := run(ctx, []string{"-v"}, out, &errOut, false)
	report := out.buf.String()
	if code != 130 || errOut.String() != "politecrawl: interrupted\n" {
		t.Errorf("run after Ctrl-C = %d, stderr %q; want 130 and \"politecrawl: interrupted\"", code, errOut.String())
	}
	if !strings.Contains(report, "\noutcomes\n") {
		t.Errorf("run after Ctrl-C printed no report:\n%s", report)
	}
	if strings.Contains(report, "context canceled") || !regexp.MustCompile(`gave up +0\n`).MatchString(report) {
		t.Errorf("run after Ctrl-C counted cancelled requests as failures:\n%s", report)
	}
}

// TestUnreachable: a site whose robots.txt answers 503 (here with a short
// Retry-After, so that the Guard's three tries take seconds, not minutes)
// ends with a report, a line on stderr and exit status 1.
func TestUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-url", srv.URL, "-sitemaps=false"}, &out, &errOut, false)
	if code != 1 || !strings.Contains(errOut.String(), "politecrawl: no page fetched; 1 URL gave up") ||
		!strings.Contains(out.String(), "robots.txt unreachable") {
		t.Errorf("run against an unreachable site = %d, stderr %q, report:\n%s\nwant 1, the line on stderr and the reason in the report", code, errOut.String(), out.String())
	}
}
