package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/robotsmw/robotsmw/internal/promtext"
	robotsmw "github.com/robotsmw/robotsmw/middleware"
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
			"links not followed (nofollow, -max)             3",
			"pages that say noindex                          1",
			"back-offs (429/503, retried later)              2",
			"gave up                                         0",
			"/login (on /): rel=\"nofollow\"",
			"/forum/thread-1 (on /forum/): page says nofollow (meta robots)",
			`/files/report.pdf: disallowed by line 8: disallow: /*.pdf$ (group "PoliteCrawl")`,
			`/blog/3?sessionid=42: disallowed by line 7: disallow: /*?sessionid= (group "PoliteCrawl")`,
			`/private/team: disallowed by line 5: disallow: /private/ (group "PoliteCrawl") (redirected from /old-team)`,
			// The first /shop/ page to arrive (the order of a polite
			// schedule, one request in flight) is told to come back.
			": 503 Service Unavailable, Retry-After: 1; host paused, retry 1 in 1s",
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
	code := run(ctx, nil, out, &errOut, false)
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

// TestVerboseLog: -v prints the Guard's log on stderr instead of the
// progress line: blocked with its line and rule, the demo shop's 503, the
// robots.txt and sitemaps read; -v=debug the deferrals and links not
// followed too. -metrics says where it serves.
func TestVerboseLog(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"-v=debug", "-metrics", "127.0.0.1:0"}, &out, &errOut, true); code != 0 {
		t.Fatalf("run(-v=debug -metrics 127.0.0.1:0) = %d, want 0; stderr:\n%s", code, errOut.String())
	}
	log := errOut.String()
	for _, want := range []string{
		"politecrawl: metrics on http://127.0.0.1:",
		`level=INFO msg="request blocked" host=127.0.0.1 url=http://127.0.0.1:`,
		`line=8 rule="disallow: /*.pdf$"`,
		// The demo shop's 503, whichever /shop/ page arrives first: one
		// line, with the pause it started.
		`level=INFO msg="request retried" host=127.0.0.1 url=http://127.0.0.1:`,
		`cause="robotsmw: status 503 Service Unavailable" next_attempt=`,
		`host_pause=1s retry_after=1s`,
		`level=INFO msg="robots.txt fetched" origin=http://127.0.0.1:`,
		`level=INFO msg="sitemap read" url=http://127.0.0.1:`,
		`level=DEBUG msg="link not followed"`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("run(-v=debug) log lacks %q; stderr:\n%s", want, log)
		}
	}
	if strings.Contains(out.String(), "\r") {
		t.Errorf("run(-v=debug) drew the progress line:\n%q", out.String())
	}
	for _, tc := range []struct {
		arg  string
		want string
	}{{"true", "info"}, {"debug", "debug"}, {"false", "false"}} {
		var l logLevel
		if err := l.Set(tc.arg); err != nil || l.String() != tc.want {
			t.Errorf("logLevel.Set(%q) = %v, level %s; want %s", tc.arg, err, l.String(), tc.want)
		}
	}
	if err := new(logLevel).Set("loud"); err == nil {
		t.Error("logLevel.Set(loud) = nil, want an error")
	}
}

// TestMetrics: -metrics serves the Guard's Stats in Prometheus's text
// format on /metrics.
func TestMetrics(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"-metrics", "127.0.0.1:-1"}, &out, &errOut, false); code != 2 {
		t.Errorf("run(-metrics 127.0.0.1:-1) = %d, want 2", code)
	}

	g := &robotsmw.Guard{}
	url, stop, err := promtext.Serve("127.0.0.1:0", g.Stats)
	if err != nil {
		t.Fatalf("promtext.Serve: %v", err)
	}
	defer stop()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("GET %s = %d %q, want 200 text/plain; version=0.0.4", url, resp.StatusCode, ct)
	}
	for _, want := range []string{
		"# TYPE robotsmw_requests_sent_total counter\nrobotsmw_requests_sent_total 0\n",
		"robotsmw_pages_fetched_total 0\n",
		`robotsmw_final_outcomes_total{outcome="blocked"} 0`,
		`robotsmw_robots_fetches_total{result="parsed"} 0`,
		"robotsmw_hosts_paused 0\n",
		`robotsmw_wait_seconds_bucket{le="+Inf"} 0`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("GET %s lacks %q:\n%s", url, want, body)
		}
	}
}
