package robotsmw

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"
)

// A retry is handled with its first attempt's ParseHTTPErrorResponse: a
// request whose first attempt failed with it off is not delivered to
// OnResponse on a later attempt after the user turned it on; a new
// request is.
func TestRetryKeepsParseHTTPErrorResponse(t *testing.T) {
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/500" {
			w.WriteHeader(http.StatusInternalServerError)
			return true
		}
		return false
	}))
	for _, tc := range []struct {
		name      string
		retry     bool // sent as the retry of an attempt with it off
		responses int32
	}{
		{"new request", false, 1},
		{"retry of an attempt with it off", true, 0},
	} {
		g := &Guard{Rate: rate.Inf, Backoff: 60 * time.Millisecond, MaxRetries: 1, MaxRobotsFailures: 1}
		c := colly.NewCollector(g.Attach)
		c.ParseHTTPErrorResponse = true
		var responses atomic.Int32
		c.OnResponse(func(*colly.Response) { responses.Add(1) })
		ctx := colly.NewContext()
		hdr := http.Header{}
		if tc.retry {
			// The visit a failed attempt with it off leaves for its retry.
			v := &visit{c: c, method: "GET", orig: mustURL(t, s.URL+"/500"), key: keyOf(hdr),
				parse: parseSnapshot{set: true, value: false}}
			v.reissuing.Store(true)
			g.visits.put(v)
		}
		c.Request("GET", s.URL+"/500", nil, ctx, hdr)
		waitOrFail(t, "Wait", c.Wait)
		if got := responses.Load(); got != tc.responses {
			t.Errorf("%s: Request(/500) reached OnResponse %d times, want %d", tc.name, got, tc.responses)
		}
	}
}

// A retry deferred again before it is sent (its host paused meanwhile)
// keeps its first attempt's ParseHTTPErrorResponse in its deferral, so
// that it is sent with it when it comes back; a new request's deferral
// takes none (it is sent with the collector's setting then).
func TestRetryDeferredAgainKeepsParse(t *testing.T) {
	for _, tc := range []struct {
		name  string
		retry bool
		want  parseSnapshot
	}{
		{"new request", false, parseSnapshot{}},
		{"retry of an attempt with it off", true, parseSnapshot{set: true, value: false}},
	} {
		g := &Guard{Rate: rate.Inf}
		// Asynchronous: a synchronous collector's request would wait out
		// the hour in place (inplace.go), never deferred.
		c := colly.NewCollector(g.Attach, colly.Async(true))
		c.ParseHTTPErrorResponse = true // turned on after the first attempt
		u := mustURL(t, "http://paused.test/page")
		g.strike(g.host(u), g.clock(), hard, http.Header{"Retry-After": {"3600"}})
		ctx := colly.NewContext()
		hdr := http.Header{}
		if tc.retry {
			v := &visit{c: c, method: "GET", orig: u, key: keyOf(hdr),
				parse: parseSnapshot{set: true, value: false}}
			v.reissuing.Store(true)
			g.visits.put(v)
		}
		r := &colly.Request{URL: u, Method: "GET", Ctx: ctx, Headers: &hdr}
		g.onRequest(c, r)
		tk := g.visits.get(keyOf(hdr))
		var de *DeferredError
		if tk == nil || !errors.As(tk.err, &de) {
			t.Fatalf("%s: onRequest(%s) left %+v, want a visit with a deferral", tc.name, u, tk)
		}
		if de.parse != tc.want {
			t.Errorf("%s: onRequest(%s) deferral's ParseHTTPErrorResponse %+v, want %+v", tc.name, u, de.parse, tc.want)
		}
	}
}
