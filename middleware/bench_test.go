package robotsmw

import (
	"context"
	"net/http"
	"testing"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"
)

// BenchmarkHooks measures the Guard's own cost per request with a warm
// robots.txt cache and Rate = rate.Inf: the OnRequest, OnRequestHeaders and
// OnResponseHeaders callbacks of one allowed 200 response.
func BenchmarkHooks(b *testing.B) {
	s := newSite(b, robots("User-agent: *\nDisallow: /private\nAllow: /private/ok\n", nil))
	g := &Guard{Rate: rate.Inf}
	c := colly.NewCollector(g.Attach)
	u := mustURL(b, s.URL+"/some/page?q=1")
	if err := g.admit(context.Background(), g.cache(c), u, g.agent(c), false); err != nil {
		b.Fatal(err)
	}
	req := &colly.Request{URL: u, Method: "GET"}
	hdr := http.Header{"Content-Type": {"text/html"}}
	resp := &colly.Response{StatusCode: 200, Request: req, Headers: &hdr}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g.onRequest(c, req)
		g.onRequestHeaders(c, req)
		g.onResponseHeaders(c, resp)
	}
	if req.IsAbort() {
		b.Fatal("request aborted")
	}
}

// BenchmarkAdmitParallel is BenchmarkHooks' OnRequest under contention:
// many goroutines admitting requests to one host.
func BenchmarkAdmitParallel(b *testing.B) {
	s := newSite(b, robots("User-agent: *\nDisallow: /private\n", nil))
	g := &Guard{Rate: rate.Inf}
	c := colly.NewCollector(g.Attach)
	u := mustURL(b, s.URL+"/some/page")
	cache, agent := g.cache(c), g.agent(c)
	if err := g.admit(context.Background(), cache, u, agent, false); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := g.admit(context.Background(), cache, u, agent, false); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
