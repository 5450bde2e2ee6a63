package robotsmw

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/directives"

	"github.com/PuerkitoBio/goquery"
	"github.com/gocolly/colly/v2"
	"github.com/robotsmw/robotsmw/policy"
	"golang.org/x/time/rate"
)

// BenchmarkHooks measures the Guard's own cost per request through
// colly's HTTP client, against the same requests without the Guard (bare):
// the OnRequest and OnRequestHeaders callbacks (robots.txt from the
// host's memo, the request's position and lease), the transport (the
// ticket, the request's timeout, the response's classification, the body
// watcher, read to its end and closed, which gives the lease back) and
// OnResponseHeaders, for one allowed 200 response from a transport that
// answers at once, Rate = rate.Inf, robots.txt fetched and cached. The
// requests go round 256 hosts, as a crawl's do, so that no host is asked
// again before its last response's gap (FixedPace off) has passed. bare's
// client has no Timeout: net/http does not know its transport and would
// arm a timer and a goroutine per request for one, which colly's own
// transport does not cost; the guarded requests are bounded by the
// Timeout Attach took over, a cost of the Guard. colly makes a new
// Request per fetch, and so does the benchmark. guard−bare is what the
// Guard adds.
func BenchmarkHooks(b *testing.B) {
	benchmarkHooks(b, 256, 0)
}

// BenchmarkHooksCold is BenchmarkHooks as a broad crawl runs it: 8,192
// hosts, and each request's OnRequest runs 256 requests before its
// OnRequestHeaders and its send, as colly's queue for its LimitRule slots
// holds it, so that the host's state is out of the CPU's caches at each
// step, as it is in a crawl.
func BenchmarkHooksCold(b *testing.B) {
	benchmarkHooks(b, 8192, 256)
}

// benchmarkHooks runs BenchmarkHooks over hosts hosts, with depth
// requests' OnRequest between a request's OnRequest and the rest of it.
func benchmarkHooks(b *testing.B, hosts, depth int) {
	for _, mode := range []string{"bare", "guard", "fixedpace", "async"} {
		b.Run(mode, func(b *testing.B) {
			c := colly.NewCollector(colly.Async(mode == "async"))
			rb := []byte("User-agent: *\nDisallow: /private\nAllow: /private/ok\n")
			body := []byte("<html><body>ok</body></html>")
			var rt http.RoundTripper = roundTripFunc(func(r *http.Request) (*http.Response, error) {
				b := body
				if r.URL.Path == "/robots.txt" {
					b = rb
				}
				return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/html"}}, Body: io.NopCloser(bytes.NewReader(b)), Request: r}, nil
			})
			c.WithTransport(rt)
			if mode == "bare" {
				c.SetRequestTimeout(0)
			}
			g := &Guard{Rate: rate.Inf, FixedPace: mode == "fixedpace"}
			if mode != "bare" {
				g.Attach(c)
			}
			hc := collyClient(c)
			us := make([]*url.URL, hosts)
			for i := range us {
				us[i] = mustURL(b, fmt.Sprintf("http://h%03d.test/some/page?q=1", i))
			}
			hdr := http.Header{"Content-Type": {"text/html"}}
			type pending struct {
				req *http.Request
				r   *colly.Request
			}
			queue, n := make([]pending, depth), 0 // a ring of the requests between their two callbacks
			var id uint32                         // colly numbers its requests
			var hooked *Guard                     // nil: bare
			if mode != "bare" {
				hooked = g
			}
			fetch := func(u *url.URL) {
				id++
				req, r := hookedRequest(b, u, id)
				if hooked != nil {
					g.onRequest(c, r)
				}
				if depth > 0 {
					slot := &queue[n%depth]
					n++
					slot.req, req, slot.r, r = req, slot.req, r, slot.r
					if req == nil {
						return
					}
				}
				sendHooked(b, hooked, c, hc, req, r, &hdr)
			}
			for _, u := range us {
				fetch(u) // robots.txt fetched and cached
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				fetch(us[i%hosts])
			}
		})
	}
}

// BenchmarkLogOff measures BenchmarkHooks' callbacks for a request that
// robots.txt blocks, a path that logs ("request blocked"), with no Logger,
// with a Logger whose level is off, and with one that writes (to
// io.Discard): the first two must cost the same allocations.
func BenchmarkLogOff(b *testing.B) {
	s := newSite(b, robots("User-agent: *\nDisallow: /private\n", nil))
	for _, tc := range []struct {
		name string
		l    *slog.Logger
	}{
		{"nil", nil},
		{"level-off", slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError}))},
		{"on", slog.New(slog.NewTextHandler(io.Discard, nil))},
	} {
		b.Run(tc.name, func(b *testing.B) {
			g := &Guard{Rate: rate.Inf, Logger: tc.l}
			c := colly.NewCollector(g.Attach)
			u := mustURL(b, s.URL+"/private/page?q=1")
			if _, err := g.admit(context.Background(), g.cacheFor(c, nil), u, g.agent(c), defaultMaxWait, false, false); !errors.Is(err, ErrDisallowed) {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				req := &colly.Request{URL: u, Method: "GET", Headers: &http.Header{}}
				g.onRequest(c, req)
				v := g.visits.get(keyOf(*req.Headers))
				if v == nil || !errors.Is(v.err, ErrDisallowed) {
					b.Fatalf("visit %+v", v)
				}
				g.visits.drop(v)
			}
		})
	}
}

// BenchmarkAdmitParallel is BenchmarkHooks' OnRequest under contention:
// many goroutines admitting requests to one host.
func BenchmarkAdmitParallel(b *testing.B) {
	s := newSite(b, robots("User-agent: *\nDisallow: /private\n", nil))
	g := &Guard{Rate: rate.Inf}
	c := colly.NewCollector(g.Attach)
	u := mustURL(b, s.URL+"/some/page")
	cache, agent := g.cacheFor(c, nil), g.agent(c)
	if _, err := g.admit(context.Background(), cache, u, agent, defaultMaxWait, false, false); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := g.admit(context.Background(), cache, u, agent, defaultMaxWait, false, false); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkTransport measures what the Guard's transport adds to one colly
// request with a ticket and a deadline (colly's client has a Timeout): the
// ticket look-up, the early deadline, the response's classification, and
// the body watcher, read to its end and closed.
func BenchmarkTransport(b *testing.B) {
	g := &Guard{Rate: rate.Inf}
	body := []byte("<html><body>ok</body></html>")
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body)), Request: r}, nil
	})
	t := &guardTransport{g: g, next: next}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.test/page", nil)
	if err != nil {
		b.Fatal(err)
	}
	r := &colly.Request{URL: req.URL, Method: "GET", Headers: &req.Header}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		v := &visit{method: r.Method, orig: r.URL, gated: true, key: keyOf(req.Header)}
		v.pass(r)
		g.visits.put(v)
		resp, err := t.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// directivesPage is a 100 KB HTML page with robots meta tags and 1,000
// links, as BenchmarkDirectives parses it.
func directivesPage() []byte {
	var b bytes.Buffer
	b.WriteString(`<!doctype html><html><head><title>A page</title>
<meta charset="utf-8"><meta name="viewport" content="width=device-width">
<meta name="robots" content="max-snippet:50, noarchive"><meta name="examplebot" content="nofollow">
<link rel="stylesheet" href="/s.css"></head><body>`)
	for i := 0; b.Len() < 100<<10; i++ {
		fmt.Fprintf(&b, `<div class="item"><h2>Item %d</h2><p>Some text about item %d, long enough to look like a page.</p><a href="/item/%d">more</a></div>`, i, i, i)
	}
	b.WriteString("</body></html>")
	return b.Bytes()
}

// BenchmarkDirectives compares the page directives' cost with colly's own
// parse of the same 100 KB page (goquery.NewDocumentFromReader, which
// colly runs once per HTML response that has OnHTML callbacks):
// "follow-links" is what FollowLinks adds on colly's document (the
// directives from its <head>), "directives" what Guard.Directives costs
// when called from OnResponse (its own parse of the <head> alone).
func BenchmarkDirectives(b *testing.B) {
	page := directivesPage()
	hdr := http.Header{"Content-Type": {"text/html"}, "X-Robots-Tag": {"noimageindex"}}
	g := &Guard{Agent: "ExampleBot"}
	resp := &colly.Response{StatusCode: 200, Body: page, Headers: &hdr, Request: &colly.Request{}}
	b.Run("colly-parse", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		b.ReportAllocs()
		for range b.N {
			if _, err := goquery.NewDocumentFromReader(bytes.NewReader(page)); err != nil {
				b.Fatal(err)
			}
		}
	})
	doc, _ := goquery.NewDocumentFromReader(bytes.NewReader(page))
	html := doc.Find("html")
	b.Run("follow-links", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		b.ReportAllocs()
		for range b.N {
			if d := directives.Parse("ExampleBot", hdr, html.ChildrenFiltered("head")); !d.NoFollow {
				b.Fatal("nofollow not found")
			}
		}
	})
	b.Run("directives", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		b.ReportAllocs()
		for range b.N {
			if d := g.Directives(resp); !d.NoFollow {
				b.Fatal("nofollow not found")
			}
		}
	})
}

// BenchmarkRobotsFirstContact measures what a request costs when the
// Guard sees its host for the first time, through colly's client and
// BenchmarkHooks' callbacks, against a loopback server: every iteration
// asks a new host (hN.test) for a page. All hosts go through one proxy,
// the server, so that their requests share kept-alive connections and no
// dial is measured. "guard" fetches each host's robots.txt (the own
// cache, its fetch goroutine, the paced transport); "stored" finds it in
// the Guard's store already (no fetch); "bare" is colly without the Guard
// and "get" the same with a plain GET of /robots.txt before the page.
// guard−stored is what a robots.txt fetch costs the Guard, get−bare what
// the GET itself costs.
func BenchmarkRobotsFirstContact(b *testing.B) {
	const rb = "User-agent: *\nDisallow: /private/\n"
	srv := httptest.NewServer(robots(rb, nil))
	b.Cleanup(srv.Close)
	proxy := mustURL(b, srv.URL)
	for _, mode := range []string{"bare", "get", "stored", "guard"} {
		b.Run(mode, func(b *testing.B) {
			tr := &http.Transport{
				Proxy:               func(*http.Request) (*url.URL, error) { return proxy, nil },
				MaxIdleConnsPerHost: 4,
			}
			defer tr.CloseIdleConnections()
			c := colly.NewCollector()
			guarded := mode == "stored" || mode == "guard"
			c.WithTransport(tr)
			// FixedPace: the page does not wait for the gap after
			// robots.txt's response (its latency), a timer that would
			// dominate the wall time here.
			g := &Guard{Rate: rate.Inf, FixedPace: true}
			if mode == "stored" {
				g.RobotsStore = anyOrigin{policy.Record{
					State: policy.StateParsed, GoodState: policy.StateParsed, StatusCode: 200,
					FetchedAt: time.Now(), Expires: time.Now().Add(time.Hour), Body: []byte(rb),
				}}
			}
			if guarded {
				g.Attach(c)
			}
			hc := collyClient(c)
			hdr := http.Header{"Content-Type": {"text/html"}}
			var hooked *Guard // nil: bare or get
			if guarded {
				hooked = g
			}
			var id uint32
			get := func(u *url.URL) {
				id++
				req, r := hookedRequest(b, u, id)
				if guarded {
					g.onRequest(c, r)
				}
				sendHooked(b, hooked, c, hc, req, r, &hdr)
			}
			n := 0
			visit := func() {
				n++
				if mode == "get" {
					get(mustURL(b, fmt.Sprintf("http://h%d.test/robots.txt", n)))
				}
				get(mustURL(b, fmt.Sprintf("http://h%d.test/some/page", n)))
			}
			for range 100 {
				visit() // connections open, the pools warm
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuTime()
			for range b.N {
				visit()
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// hookedRequest returns a GET of u and its colly request, numbered id, as
// colly makes them for a fetch.
func hookedRequest(b *testing.B, u *url.URL, id uint32) (*http.Request, *colly.Request) {
	req, err := http.NewRequest(http.MethodGet, u.String(), nil)
	if err != nil {
		b.Fatal(err)
	}
	req.URL = u
	return req, &colly.Request{URL: u, Method: "GET", Headers: &req.Header, ID: id}
}

// sendHooked sends req, the request of r, through colly's client hc and
// reads its 200 response to the end, with g's OnRequestHeaders before and
// OnResponseHeaders (the response's header hdr) after, as colly calls
// them; g nil sends it bare. OnRequest is the caller's.
func sendHooked(b *testing.B, g *Guard, c *colly.Collector, hc *http.Client, req *http.Request, r *colly.Request, hdr *http.Header) {
	if g != nil {
		g.onRequestHeaders(c, r)
	}
	resp, err := hc.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("GET %s: %d", req.URL, resp.StatusCode)
	}
	if g != nil {
		g.onResponseHeaders(c, &colly.Response{StatusCode: 200, Request: r, Headers: hdr})
	}
}

// cpuTime returns the CPU time (user and system) the process has used:
// the benchmark's, the server's and the runtime's.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// anyOrigin is a policy.Store that holds rec for every origin.
type anyOrigin struct{ rec policy.Record }

func (s anyOrigin) Load(context.Context, string) (policy.Record, bool, error) {
	return s.rec, true, nil
}

func (anyOrigin) Save(context.Context, string, policy.Record) error { return nil }
