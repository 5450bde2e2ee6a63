package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/internal/loadsite"
)

// trialBSite serves a robots.txt with a MyBot group (its own Crawl-delay
// and a path only MyBot may not fetch) beside the "*" group, an index of
// two sitemaps, one 404 sitemap, one 500 and one truncated; every
// request but robots.txt takes 20 ms of work.
func trialBSite(t *testing.T) *loadsite.Site {
	var base string
	srv := loadsite.New(t, func(r *http.Request) time.Duration {
		return 20 * time.Millisecond
	}, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nDisallow: /all-bots\n\nUser-agent: MyBot\nCrawl-delay: 1.1\nDisallow: /mybot-only\n\nSitemap: %s/index.xml\n", base)
		case "/index.xml":
			fmt.Fprintf(w, `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
			for i := 0; i < 2; i++ {
				fmt.Fprintf(w, `<sitemap><loc>%s/s%d.xml</loc></sitemap>`, base, i)
			}
			fmt.Fprint(w, `</sitemapindex>`)
		case "/s0.xml", "/s1.xml", "/s2.xml":
			fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/p%s</loc></url><url><loc>%s/mybot-only/x</loc></url></urlset>`, base, r.URL.Path, base)
		case "/broken.xml":
			fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/ok</loc></url><url><loc>%s/cut`, base, base)
		case "/fail.xml":
			http.Error(w, "oops", http.StatusInternalServerError)
		default:
			http.NotFound(w, r)
		}
	})
	base = srv.URL
	return srv
}

const trialBAgent = "Mozilla/5.0 (compatible; MyBot/1.0; +https://x)"

// check with a real bot User-Agent uses the MyBot group, in text and JSON.
func TestTrialBCheckBotUserAgent(t *testing.T) {
	srv := trialBSite(t)
	for _, tt := range []struct {
		args     []string
		code     int
		contains []string
	}{
		{[]string{"check", "-agent", trialBAgent, srv.URL + "/mybot-only/a", srv.URL + "/all-bots/a"}, 1, []string{
			"DISALLOWED " + srv.URL + "/mybot-only/a: by line 6: disallow: /mybot-only (group \"MyBot\")",
			"ALLOWED    " + srv.URL + "/all-bots/a: no rule matched in group \"MyBot\"",
		}},
		{[]string{"check", "-json", "-agent", trialBAgent, srv.URL + "/mybot-only/a"}, 1, []string{`"agent":"MyBot"`, `"verdict":"disallowed"`, `"group":"MyBot"`}},
		{[]string{"check", "-agent", "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0", srv.URL + "/mybot-only/a", srv.URL + "/all-bots/a"}, 1, []string{
			"ALLOWED    " + srv.URL + "/mybot-only/a",
			"DISALLOWED " + srv.URL + "/all-bots/a",
		}},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), tt.args, strings.NewReader(""), &out, &errOut, srv.Client())
		if code != tt.code {
			t.Errorf("run(%q) exit = %d, want %d; stderr %q", tt.args, code, tt.code, errOut.String())
		}
		for _, c := range tt.contains {
			if !strings.Contains(out.String(), c) {
				t.Errorf("run(%q) output %q does not contain %q", tt.args, out.String(), c)
			}
		}
	}
}

// sitemaps -walk with a bot User-Agent walks the index paced by the MyBot
// group's Crawl-delay (longer than the Guard's default interval, 1 s),
// judged at the server, and drops the pages MyBot
// may not fetch.
func TestTrialBWalkPacedByAgentGroup(t *testing.T) {
	srv := trialBSite(t)
	args := []string{"sitemaps", "-walk", "-agent", trialBAgent, srv.URL}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), args, strings.NewReader(""), &out, &errOut, srv.Client()); code != 0 {
		t.Fatalf("run(%q) exit = %d, stderr %q", args, code, errOut.String())
	}
	for _, c := range []string{"sitemap files read: 3\n", "page URLs: 2\n", "dropped URLs: 2 (robots 2)"} {
		if !strings.Contains(out.String(), c) {
			t.Errorf("run(%q) summary %q does not contain %q", args, out.String(), c)
		}
	}
	peak, spans := srv.Result()
	if peak != 1 || len(spans) != 4 {
		t.Errorf("server saw %d requests, peak in flight %d; want 4 (robots.txt, index, 2 sitemaps), 1", len(spans), peak)
	}
	for i := 1; i < len(spans); i++ {
		if d := spans[i].Start.Sub(spans[i-1].End); d < 1100*time.Millisecond {
			t.Errorf("%s started %v after the end of %s, want ≥ MyBot's Crawl-delay 1.1s", spans[i].Path, d, spans[i-1].Path)
		}
	}
}

// Bad sitemaps: each failure is listed with its URL and what went wrong,
// and the exit status is 1; a robots.txt that answers 5xx makes check
// exit 2.
func TestTrialBWalkBadInput(t *testing.T) {
	srv := trialBSite(t)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusBadGateway)
	}))
	defer down.Close()
	for _, tt := range []struct {
		args     []string
		code     int
		contains []string
	}{
		{[]string{"sitemaps", "-walk", "-timeout", "5s", srv.URL + "/missing.xml"}, 1, []string{"failed sitemaps: 1\n", srv.URL + "/missing.xml: answered 404 Not Found"}},
		{[]string{"sitemaps", "-walk", srv.URL + "/fail.xml"}, 1, []string{"failed sitemaps: 1\n", srv.URL + "/fail.xml: answered 500 Internal Server Error"}},
		{[]string{"sitemaps", "-walk", "-urls", srv.URL + "/broken.xml"}, 1, []string{srv.URL + "/ok\n", "failed sitemaps: 1\n", srv.URL + "/broken.xml: "}},
		{[]string{"check", down.URL + "/a"}, 2, []string{"DISALLOWED " + down.URL + "/a: " + down.URL + "/robots.txt is unreachable (answered 502 Bad Gateway)"}},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), tt.args, strings.NewReader(""), &out, &errOut, srv.Client())
		if code != tt.code {
			t.Errorf("run(%q) exit = %d, want %d; stderr %q", tt.args, code, tt.code, errOut.String())
		}
		all := out.String() + errOut.String()
		for _, c := range tt.contains {
			if !strings.Contains(all, c) {
				t.Errorf("run(%q) output %q does not contain %q", tt.args, all, c)
			}
		}
	}
}

// A host whose pacing is longer than -timeout (the Guard's default
// interval, 1 s, or MyBot's Crawl-delay, 1.1 s): the walk waits for it, as
// a crawl does, instead of failing each sitemap with "no answer within
// -timeout", a reason that is false: nothing was sent.
func TestTrialBWalkPacingBeyondTimeout(t *testing.T) {
	for _, agent := range []string{"robotstxt", "MyBot"} {
		srv := trialBSite(t)
		args := []string{"sitemaps", "-walk", "-agent", agent, "-timeout", "600ms", srv.URL}
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(""), &out, &errOut, srv.Client())
		_, spans := srv.Result()
		if code != 0 || len(spans) != 4 {
			t.Errorf("run(%q) exit = %d, the server saw %d requests; want 0, 4 (robots.txt, index, 2 sitemaps); output %q", args, code, len(spans), out.String()+errOut.String())
		}
	}
}

// Interrupted (Ctrl-C) while the walk waits for the host's Crawl-delay:
// the CLI stops at once, exits 130 and says the walk was interrupted,
// and nothing more reaches the server.
func TestTrialBWalkInterruptedDuringCrawlDelay(t *testing.T) {
	var base string
	arrived := make(chan string, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- r.URL.Path
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nCrawl-delay: 20\nSitemap: %s/index.xml\n", base)
		default:
			fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/p</loc></url></urlset>`, base)
		}
	}))
	defer srv.Close()
	base = srv.URL
	ctx, cancel := context.WithCancel(context.Background())
	args := []string{"sitemaps", "-walk", "-timeout", "1m", srv.URL}
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, strings.NewReader(""), &out, &errOut, srv.Client()) }()
	if p := <-arrived; p != "/robots.txt" {
		t.Fatalf("first request %s, want /robots.txt", p)
	}
	time.Sleep(200 * time.Millisecond) // waiting for the Crawl-delay now
	cancel()
	select {
	case code := <-done:
		if code != 130 || !strings.Contains(out.String()+errOut.String(), "walk interrupted") {
			t.Errorf("run(%q) interrupted = %d, output %q; want 130, walk interrupted", args, code, out.String()+errOut.String())
		}
	case <-time.After(3 * time.Second):
		t.Fatalf("run(%q) still running 3s after the interrupt", args)
	}
	select {
	case p := <-arrived:
		t.Errorf("%s reached the server after the interrupt", p)
	default:
	}
}
