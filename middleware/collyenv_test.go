package robotsmw

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/policy"
)

// envFalseSite serves a robots.txt that disallows /private, and redirects
// /redir into it and /hop to /ok.
func envFalseSite(t *testing.T) *site {
	t.Helper()
	return newSite(t, robots("User-agent: *\nDisallow: /private\n", func(w http.ResponseWriter, r *http.Request) bool {
		switch r.URL.Path {
		case "/redir":
			http.Redirect(w, r, "/private/x", http.StatusFound)
			return true
		case "/hop":
			http.Redirect(w, r, "/ok", http.StatusFound)
			return true
		}
		return false
	}))
}

// noPrivateHits reports every request for /private that reached s.
func noPrivateHits(t *testing.T, name string, s *site) {
	t.Helper()
	for _, h := range s.log() {
		if strings.HasPrefix(h.path, "/private") {
			t.Errorf("%s: server received %s %s", name, h.method, h.path)
		}
	}
}

// COLLY_IGNORE_ROBOTSTXT=false turns colly's own robots.txt check back on
// after the options of NewCollector, and colly checks before any callback.
// Attached either way (as an option or after NewCollector), the Guard
// alone decides: colly's check is answered locally, a disallowed request
// reaches ErrorHandler as the Guard's *DisallowedError (never colly's own),
// and the server sees one robots.txt request, the Guard's.
func TestCollyRobotsEnvFalse(t *testing.T) {
	t.Setenv("COLLY_IGNORE_ROBOTSTXT", "false")
	tests := []struct {
		name string
		new  func(g *Guard) *colly.Collector
	}{
		{"option", func(g *Guard) *colly.Collector { return colly.NewCollector(g.Attach) }},
		{"after NewCollector", func(g *Guard) *colly.Collector {
			c := colly.NewCollector()
			g.Attach(c)
			return c
		}},
	}
	for _, tt := range tests {
		s := envFalseSite(t)
		var rep reports
		g := withReports(&Guard{Rate: rate.Inf}, &rep)
		c := tt.new(g)
		if tt.name == "option" && c.IgnoreRobotsTxt {
			t.Fatalf("colly no longer applies COLLY_IGNORE_ROBOTSTXT after options; the test proves nothing")
		}
		var got []string
		c.OnResponse(func(r *colly.Response) { got = append(got, r.Request.URL.Path) })

		// The first request is disallowed: colly's check runs before it.
		if err := c.Visit(s.URL + "/private/a"); !errors.Is(err, ErrDisallowed) {
			t.Errorf("%s: Visit(/private/a) = %v, want ErrDisallowed", tt.name, err)
		}
		if err := c.Visit(s.URL + "/ok"); err != nil {
			t.Errorf("%s: Visit(/ok) = %v, want nil", tt.name, err)
		}
		if err := c.Visit(s.URL + "/private/b"); !errors.Is(err, ErrDisallowed) {
			t.Errorf("%s: Visit(/private/b) = %v, want ErrDisallowed", tt.name, err)
		}
		for _, path := range []string{"/private/a", "/private/b"} {
			errs := rep.get(s.URL + path)
			if len(errs) != 1 || !errors.As(errs[0], new(*DisallowedError)) {
				t.Errorf("%s: ErrorHandler(%s) = %v, want one error wrapping ErrDisallowed", tt.name, path, errs)
			}
		}
		if len(got) != 1 || got[0] != "/ok" {
			t.Errorf("%s: OnResponse saw %v, want [/ok]", tt.name, got)
		}
		if n := s.count("/robots.txt"); n != 1 {
			t.Errorf("%s: robots.txt requested %d times, want 1 (the Guard's)", tt.name, n)
		}
		if n := s.count("/ok"); n != 1 {
			t.Errorf("%s: /ok requested %d times, want 1", tt.name, n)
		}
		noPrivateHits(t, tt.name, s)
	}
}

// In Async mode colly checks each Visit in the caller's goroutine, before
// the Guard's first OnRequest has run at all; redirects are checked by the
// Guard's redirect handler, also into a second origin.
func TestCollyRobotsEnvFalseAsync(t *testing.T) {
	t.Setenv("COLLY_IGNORE_ROBOTSTXT", "false")
	other := newSite(t, robots("User-agent: *\nDisallow: /private\n", nil))
	s := newSite(t, robots("User-agent: *\nDisallow: /private\n", func(w http.ResponseWriter, r *http.Request) bool {
		switch r.URL.Path {
		case "/redir":
			http.Redirect(w, r, "/private/x", http.StatusFound)
			return true
		case "/hop":
			http.Redirect(w, r, "/ok", http.StatusFound)
			return true
		case "/away":
			http.Redirect(w, r, other.URL+"/private/y", http.StatusFound)
			return true
		case "/away-ok":
			http.Redirect(w, r, other.URL+"/fine", http.StatusFound)
			return true
		}
		return false
	}))
	var rep reports
	g := withReports(&Guard{Rate: rate.Inf}, &rep)
	c := colly.NewCollector(g.Attach, colly.Async())
	var mu sync.Mutex // guards got
	got := map[string]int{}
	c.OnResponse(func(r *colly.Response) {
		mu.Lock()
		got[r.Request.URL.Path]++
		mu.Unlock()
	})
	var visitErrs []error
	for _, path := range []string{"/private/a", "/redir", "/hop", "/away", "/away-ok", "/p0", "/p1", "/private/b"} {
		if err := c.Visit(s.URL + path); err != nil {
			visitErrs = append(visitErrs, fmt.Errorf("Visit(%s): %w", path, err))
		}
	}
	c.Wait()

	for _, err := range visitErrs {
		t.Errorf("%v, want nil", err)
	}
	for _, u := range []string{s.URL + "/private/a", s.URL + "/private/b", s.URL + "/redir", s.URL + "/away"} {
		errs := rep.get(u)
		if len(errs) != 1 || !errors.As(errs[0], new(*DisallowedError)) {
			t.Errorf("ErrorHandler(%s) = %v, want one error wrapping ErrDisallowed", u, errs)
		}
	}
	if n := rep.len(); n != 4 {
		t.Errorf("ErrorHandler called %d times, want 4: %v", n, rep.errs)
	}
	for path, want := range map[string]int{"/ok": 1, "/p0": 1, "/p1": 1, "/fine": 1} {
		if got[path] != want {
			t.Errorf("OnResponse saw %s %d times, want %d", path, got[path], want)
		}
	}
	for _, st := range []*site{s, other} {
		if n := st.count("/robots.txt"); n != 1 {
			t.Errorf("server %s: robots.txt requested %d times, want 1 (the Guard's)", st.URL, n)
		}
		noPrivateHits(t, st.URL, st)
	}
}

// A user's own Visit of /robots.txt is not colly's check: it goes to the
// server, through the transport the user installed before Attach, and the
// Guard exempts it (RFC 9309 §2.2.2).
func TestCollyRobotsUserRobotsVisit(t *testing.T) {
	t.Setenv("COLLY_IGNORE_ROBOTSTXT", "false")
	s := envFalseSite(t)
	var rep reports
	g := withReports(&Guard{Rate: rate.Inf}, &rep)
	var sent atomic.Int64
	user := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})
	c := colly.NewCollector(func(c *colly.Collector) { c.WithTransport(user) }, g.Attach)
	var body string
	c.OnResponse(func(r *colly.Response) { body = string(r.Body) })
	if err := c.Visit(s.URL + "/robots.txt"); err != nil {
		t.Fatalf("Visit(/robots.txt) = %v, want nil", err)
	}
	if !strings.Contains(body, "Disallow: /private") {
		t.Errorf("OnResponse body = %q, want the server's robots.txt", body)
	}
	if n := s.count("/robots.txt"); n != 1 {
		t.Errorf("robots.txt requested %d times, want 1 (the Visit's)", n)
	}
	if n := sent.Load(); n != 1 {
		t.Errorf("user's transport sent %d requests, want 1 (colly's check answered before it)", n)
	}
	if rep.len() != 0 {
		t.Errorf("ErrorHandler got %v, want nothing", rep.errs)
	}
}

// roundTripFunc adapts a function to http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A collector and its clone share one HTTP client: attaching to both
// installs one wrapper, around the transport the client had.
func TestCollyRobotsWrapperOnce(t *testing.T) {
	user := roundTripFunc(http.DefaultTransport.RoundTrip)
	g := &Guard{}
	c := colly.NewCollector(func(c *colly.Collector) { c.WithTransport(user) }, g.Attach)
	d := c.Clone()
	g.Attach(d)
	new(Guard).Attach(d)
	hc := collyClient(d)
	if hc == nil {
		t.Fatal("collyClient(clone) = nil")
	}
	w := guarded(d)
	if w == nil {
		t.Fatalf("clone's transport is %T, want the Guard's", hc.Transport)
	}
	if w.g != g {
		t.Errorf("clone's transport belongs to another Guard")
	}
	if _, ok := w.next.(roundTripFunc); !ok {
		t.Errorf("wrapper's next is %T, want the user's roundTripFunc", w.next)
	}
	if collyClient(c) != hc {
		t.Errorf("collector and clone have different clients")
	}
}

// A WithTransport after Attach replaces the wrapper; the Guard's first
// OnRequest then turns colly's check off, after colly checked the first
// request (which it allowed, so the Guard saw it too).
func TestCollyRobotsWrapperReplaced(t *testing.T) {
	t.Setenv("COLLY_IGNORE_ROBOTSTXT", "false")
	s := envFalseSite(t)
	var rep reports
	g := withReports(&Guard{Rate: rate.Inf}, &rep)
	c := colly.NewCollector(g.Attach)
	c.WithTransport(http.DefaultTransport)
	if guarded(c) != nil {
		t.Fatal("guarded(c) after WithTransport != nil, want nil")
	}
	for i := 0; i < 3; i++ {
		c.Visit(fmt.Sprintf("%s/p%d", s.URL, i))
	}
	if !c.IgnoreRobotsTxt {
		t.Errorf("after the first request c.IgnoreRobotsTxt = false, want true")
	}
	if err := c.Visit(s.URL + "/private/a"); err != nil {
		t.Errorf("Visit(/private/a) = %v, want nil", err)
	}
	if errs := rep.get(s.URL + "/private/a"); len(errs) != 1 || !errors.Is(errs[0], ErrDisallowed) {
		t.Errorf("ErrorHandler(/private/a) = %v, want ErrDisallowed", errs)
	}
	// colly's own check fetched robots.txt once, for the first request.
	if n := s.count("/robots.txt"); n != 2 {
		t.Errorf("robots.txt requested %d times, want 2 (colly's and the Guard's)", n)
	}
	noPrivateHits(t, "replaced", s)
}

// Only colly's check is answered locally: a GET of /robots.txt that
// colly's scrape built (its context carries colly.CheckRevisitKey), any
// other method and other paths reach next unchanged, a page after the
// Guard fetched its robots.txt (through next too) to admit it.
func TestCollyRobotsTransportPassesOthers(t *testing.T) {
	var seen []string
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen = append(seen, r.Method+" "+r.URL.Path)
		return emptyRobots(r), nil
	})
	g := &Guard{Rate: rate.Inf, Cache: &policy.Cache{Client: &http.Client{Transport: next}}}
	rt := &guardTransport{g: g, next: next}
	scraped := context.WithValue(context.Background(), colly.CheckRevisitKey, true)
	for _, tt := range []struct {
		name        string
		ctx         context.Context
		method, url string
	}{
		{"colly's check", context.Background(), "GET", "http://example.test/robots.txt"},
		{"Visit", scraped, "GET", "http://example.test/robots.txt"},
		{"Head", scraped, "HEAD", "http://example.test/robots.txt"},
		{"HEAD without the key", context.Background(), "HEAD", "http://example.test/robots.txt"},
		{"Visit", scraped, "GET", "http://example.test/page"},
	} {
		req, err := http.NewRequestWithContext(tt.ctx, tt.method, tt.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Errorf("RoundTrip(%s %s, %s) = %v", tt.method, tt.url, tt.name, err)
			continue
		}
		resp.Body.Close() // the end of the response frees the host
	}
	want := []string{"GET /robots.txt", "HEAD /robots.txt", "HEAD /robots.txt", "GET /robots.txt", "GET /page"}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("next saw %v, want %v (colly's check answered locally, the Guard's robots.txt fetch before /page)", seen, want)
	}
}

// BenchmarkCollyRobotsTransport measures what the Guard's transport adds to
// a request that comes without a ticket: the Guard's own admission (a warm
// robots.txt cache) for pages and for a GET of /robots.txt that colly's
// scrape built, and the local answer to colly's own check.
func BenchmarkCollyRobotsTransport(b *testing.B) {
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return emptyRobots(r), nil // a page, robots.txt alike
	})
	g := &Guard{Rate: rate.Inf, Cache: &policy.Cache{Client: &http.Client{Transport: next}}}
	rt := &guardTransport{g: g, next: next}
	scraped := context.WithValue(context.Background(), colly.CheckRevisitKey, true)
	for _, tt := range []struct {
		name, path string
		ctx        context.Context
	}{
		{"page", "/page", scraped},
		{"robots.txt", "/robots.txt", scraped},
		{"colly-check", "/robots.txt", context.Background()},
	} {
		req, err := http.NewRequestWithContext(tt.ctx, http.MethodGet, "http://example.test"+tt.path, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				resp, err := rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close() // the end of the response frees the host
			}
		})
	}
}
