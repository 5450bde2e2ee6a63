package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
)

// demoPages is the number of pages of the demo site, /p0 to /p23; each
// links to two others and to a page robots.txt disallows.
const demoPages = 24

// A demoSite is the embedded site the example crawls when it is given no
// START_URL: it counts what it is asked for, so that the demo can say what
// the server saw.
type demoSite struct {
	mu       sync.Mutex     // guards the fields below
	hits     map[string]int // requests per path
	inFlight int            // requests being answered now
	peak     int            // the most answered at once
}

func (s *demoSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	s.inFlight++
	s.peak = max(s.peak, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	if r.URL.Path == "/robots.txt" {
		fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
		return
	}
	var i int
	if r.URL.Path != "/" {
		if _, err := fmt.Sscanf(r.URL.Path, "/p%d", &i); err != nil || i < 0 || i >= demoPages {
			http.NotFound(w, r)
			return
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><title>page %d</title><a href="/p%d">next</a> <a href="/p%d">other</a> <a href="/private/%d">private</a>`,
		i, (2*i+1)%demoPages, (2*i+2)%demoPages, i)
}

// demo runs the example offline: it serves the demo site on 127.0.0.1 and
// crawls it with members fleet members in this process, each run as the
// program runs on its own (args are the command's flags), all sharing the
// Redis of -redis. Each member's lines are prefixed with its number; the
// last lines say what the site saw.
func demo(ctx context.Context, args []string, members int, stdout, stderr io.Writer) int {
	site := &demoSite{hits: map[string]int{}}
	srv := httptest.NewServer(site)
	defer srv.Close()
	fmt.Fprintf(stdout, "demo: %d members crawl the demo site at %s through one Redis\n", members, srv.URL)

	// The demo site is fast: 20 requests a second for the fleet, unless
	// -rate says otherwise (a later flag wins).
	memberArgs := append([]string{"-rate", "20"}, args...)
	memberArgs = append(slices.Clone(memberArgs), srv.URL+"/")
	var mu sync.Mutex // serializes the members' writes
	codes := make([]int, members)
	var wg sync.WaitGroup
	for i := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			prefix := fmt.Sprintf("member %d: ", i+1)
			codes[i] = run(ctx, memberArgs, &prefixed{w: stdout, mu: &mu, prefix: prefix}, &prefixed{w: stderr, mu: &mu, prefix: prefix})
		}()
	}
	wg.Wait()

	site.mu.Lock()
	defer site.mu.Unlock()
	pages, twice, private := 0, 0, 0
	for path, n := range site.hits {
		switch {
		case path == "/robots.txt":
		case strings.HasPrefix(path, "/private/"):
			private += n
		default:
			pages++
			if n > 1 {
				twice++
			}
		}
	}
	fmt.Fprintf(stdout, "demo: the site saw robots.txt fetched %d time(s), %d pages (%d of them more than once), %d requests for disallowed pages, at most %d request(s) at once\n",
		site.hits["/robots.txt"], pages, twice, private, site.peak)
	code := 0
	for _, c := range codes {
		code = max(code, c)
	}
	return code
}

// prefixed writes each line it is given behind prefix; a Write is one or
// more whole lines, as the example's printer and error messages write.
type prefixed struct {
	w      io.Writer
	mu     *sync.Mutex // shared by the writers of one output, guards w
	prefix string
}

func (p *prefixed) Write(b []byte) (int, error) {
	lines := strings.SplitAfter(string(b), "\n")
	var sb strings.Builder
	for _, l := range lines {
		if l != "" {
			sb.WriteString(p.prefix)
			sb.WriteString(l)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := io.WriteString(p.w, sb.String()); err != nil {
		return 0, err
	}
	return len(b), nil
}
