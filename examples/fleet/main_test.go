package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/internal/redistest"
)

// Three members started at once against one site crawl it as one polite
// crawler: robots.txt once, each page once, nothing disallowed, and every
// member exits 0 when the shared queue is drained.
func TestThreeMembers(t *testing.T) {
	srv := redistest.Start(t)
	var mu sync.Mutex
	hits := map[string]int{}
	var at []time.Time
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		at = append(at, time.Now())
		mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
			return
		}
		var i int
		fmt.Sscanf(r.URL.Path, "/p%d", &i)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<html><body><a href="/p%d">a</a> <a href="/p%d">b</a> <a href="/private/%d">c</a> <a href="https://elsewhere.example/">x</a></body></html>`,
			(2*i+1)%30, (2*i+2)%30, i)
	}))
	defer site.Close()

	var wg sync.WaitGroup
	codes := make([]int, 3)
	outs := make([]*bytes.Buffer, 3)
	for i := range codes {
		outs[i] = &bytes.Buffer{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var errb bytes.Buffer
			codes[i] = run(context.Background(), []string{"-redis", srv.Addr, "-rate", "20", "-agent", "FleetTest", site.URL + "/p0"}, outs[i], &errb)
			if errb.Len() > 0 {
				t.Errorf("member %d wrote to stderr: %s", i, errb.String())
			}
		}()
	}
	wg.Wait()
	for i, code := range codes {
		if code != 0 {
			t.Errorf("member %d exited %d:\n%s", i, code, outs[i])
		}
		if !strings.Contains(outs[i].String(), "drained: this member fetched") {
			t.Errorf("member %d did not report the drain:\n%s", i, outs[i])
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if hits["/robots.txt"] != 1 {
		t.Errorf("robots.txt fetched %d times by three members, want 1", hits["/robots.txt"])
	}
	for i := 0; i < 30; i++ {
		if n := hits[fmt.Sprintf("/p%d", i)]; n != 1 {
			t.Errorf("/p%d fetched %d times, want 1", i, n)
		}
	}
	for p := range hits {
		if strings.HasPrefix(p, "/private/") {
			t.Errorf("disallowed %s was fetched", p)
		}
	}
}

// A second crawl under the same prefix says why it fetches nothing, and
// -clear starts over.
func TestSecondRun(t *testing.T) {
	srv := redistest.Start(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<a href="/a">a</a>`)
	}))
	defer site.Close()
	args := []string{"-redis", srv.Addr, "-rate", "50", site.URL + "/"}
	var out, errb bytes.Buffer
	if code := run(context.Background(), args, &out, &errb); code != 0 {
		t.Fatalf("first run exited %d: %s%s", code, out.String(), errb.String())
	}
	out.Reset()
	if code := run(context.Background(), args, &out, &errb); code != 0 || !strings.Contains(out.String(), "already complete") {
		t.Errorf("second run = %d:\n%s\nwant 0 and a note that the crawl was already complete", code, out.String())
	}
	out.Reset()
	if code := run(context.Background(), append([]string{"-stats"}, args...), &out, &errb); code != 0 ||
		!strings.Contains(out.String(), "fetched 2, blocked 0, gave up 0") || !strings.Contains(out.String(), "queued 0, in flight 0") {
		t.Errorf("-stats = %d:\n%s\nwant 0 and the fleet's counts", code, out.String())
	}
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), append([]string{"-clear", "-v", "-metrics", "127.0.0.1:0"}, args...), &out, &errb); code != 0 || !strings.Contains(out.String(), "this member fetched 2 pages") {
		t.Errorf("run with -clear -v = %d:\n%s\nwant 0 and both pages fetched again", code, out.String())
	}
	// -v: the fleet's log on stderr (robots.txt is in Redis already: the
	// Guard has nothing to say about this site).
	for _, want := range []string{`level=INFO msg="fleet drained" member=`, "metrics on http://127.0.0.1:"} {
		if !strings.Contains(errb.String()+out.String(), want) {
			t.Errorf("run with -v: stderr lacks %q:\n%s", want, errb.String())
		}
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-members", "0"}, "fleet: -members must be 1 to 16\nusage: fleet [flags] [START_URL]\n"},
		{[]string{"-stats"}, "-stats needs the START_URL"},
		{[]string{"ftp://example.com/"}, "not an http or https URL"},
		{[]string{"-rate", "0", "http://example.com/"}, "must be positive"},
		{[]string{"-redis", "127.0.0.1:1", "http://example.com/"}, "does not answer"},
		{[]string{"-redis", "redis://u:p@127.0.0.1:1/3", "http://example.com/"}, "does not answer"},
		{[]string{"-redis", "redis://127.0.0.1:1/notadb", "http://example.com/"}, "-redis: redis: invalid database number"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		if code := run(context.Background(), tt.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("run(%q) = %d, stderr %q; want 2 and %q", tt.args, code, errb.String(), tt.want)
		}
	}
}

// A member pointed at a server that is not Redis says so and exits at
// once, rather than waiting for it.
func TestNotRedis(t *testing.T) {
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer web.Close()
	var out, errb bytes.Buffer
	start := time.Now()
	code := run(context.Background(), []string{"-redis", strings.TrimPrefix(web.URL, "http://"), web.URL + "/"}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "is not a Redis server") {
		t.Errorf("run against an HTTP server = %d, stderr %q; want 1 and \"is not a Redis server\"", code, errb.String())
	}
	t.Logf("exited %d after %v", code, time.Since(start))
}

// Two members whose Redis restarts empty in the middle of the crawl (no
// persistence) stop with a clear error and exit 1: never a silent success
// with pages lost.
func TestRedisLostMidCrawl(t *testing.T) {
	srv := redistest.Start(t)
	var fetched atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		fetched.Add(1)
		var i int
		fmt.Sscanf(r.URL.Path, "/p%d", &i)
		time.Sleep(20 * time.Millisecond)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<a href="/p%d">a</a> <a href="/p%d">b</a>`, (2*i+1)%200, (2*i+2)%200)
	}))
	defer site.Close()
	var wg sync.WaitGroup
	codes := make([]int, 2)
	errs := make([]*bytes.Buffer, 2)
	for i := range codes {
		errs[i] = &bytes.Buffer{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = run(context.Background(), []string{"-redis", srv.Addr, "-rate", "100", site.URL + "/p0"}, io.Discard, errs[i])
		}()
	}
	for fetched.Load() < 20 {
		time.Sleep(10 * time.Millisecond)
	}
	srv.Wipe()
	wg.Wait()
	for i, code := range codes {
		if code != 1 || !strings.Contains(errs[i].String(), "is gone from Redis") {
			t.Errorf("member %d after Redis restarted empty = exit %d, stderr %q; want 1 and the crawl lost", i, code, errs[i].String())
		}
	}
}

// TestDemo: with no START_URL the example crawls its embedded demo site
// with three members in one process, offline, and the site sees what one
// polite crawler would send: robots.txt once, each page once, no
// disallowed page, one request at a time.
func TestDemo(t *testing.T) {
	srv := redistest.Start(t)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"-redis", srv.Addr}, &out, &errb); code != 0 {
		t.Fatalf("run(-redis %s) = %d, want 0; stderr:\n%s\nstdout:\n%s", srv.Addr, code, errb.String(), out.String())
	}
	for _, want := range []string{
		"demo: 3 members crawl the demo site at http://127.0.0.1:",
		"member 1: ", "member 2: ", "member 3: ",
		fmt.Sprintf("demo: the site saw robots.txt fetched 1 time(s), %d pages (0 of them more than once), 0 requests for disallowed pages, at most 1 request(s) at once\n", demoPages+1),
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("run(-redis %s) output lacks %q:\n%s", srv.Addr, want, out.String())
		}
	}
}
