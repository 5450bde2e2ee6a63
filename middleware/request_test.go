package robotsmw

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"
)

// Two live requests a user sends with one http.Header are two requests:
// each gets a visit of its own (OnRequest gives the second a copy of the
// map), each is fetched once with the header, and nothing is left in the
// index afterwards.
func TestVisitSharedHeaderMap(t *testing.T) {
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get("X-Shared") != "yes" {
			w.WriteHeader(http.StatusBadRequest)
			return true
		}
		time.Sleep(50 * time.Millisecond) // both requests live at once
		return false
	}))
	g := &Guard{Rate: rate.Inf, InFlight: 4}
	c := colly.NewCollector(g.Attach, colly.Async())
	var fetched []string
	done := make(chan string, 4)
	c.OnResponse(func(r *colly.Response) { done <- r.Request.URL.Path })
	hdr := http.Header{"X-Shared": {"yes"}}
	for i := 0; i < 3; i++ {
		if err := c.Request("GET", fmt.Sprintf("%s/p%d", s.URL, i), nil, nil, hdr); err != nil {
			t.Fatalf("Request(/p%d) = %v", i, err)
		}
	}
	waitOrFail(t, "Wait", c.Wait)
	close(done)
	for p := range done {
		fetched = append(fetched, p)
	}
	if len(fetched) != 3 {
		t.Errorf("OnResponse saw %q, want /p0, /p1 and /p2 once each", fetched)
	}
	for i := 0; i < 3; i++ {
		if n := s.count(fmt.Sprintf("/p%d", i)); n != 1 {
			t.Errorf("server saw /p%d %d times, want 1", i, n)
		}
	}
	if n := g.visits.len(); n != 0 {
		t.Errorf("%d visits left after the crawl, want 0", n)
	}
}

// A retry finds its first attempt's visit by the key colly carries over
// (the header map): its failures add up across attempts, and the visit is
// gone once the request's outcome is final.
func TestVisitCarriedAcrossRetries(t *testing.T) {
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/always503" {
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}
		return false
	}))
	var rep reports
	g := withReports(&Guard{Rate: rate.Inf, Backoff: 20 * time.Millisecond, MaxRetries: 2, MaxRobotsFailures: 2}, &rep)
	c := colly.NewCollector(g.Attach, colly.Async())
	c.Visit(s.URL + "/always503")
	waitOrFail(t, "Wait", c.Wait)
	if n := s.count("/always503"); n != 3 {
		t.Errorf("server saw /always503 %d times, want 1 + MaxRetries 2", n)
	}
	if errs := rep.get(s.URL + "/always503"); len(errs) != 1 || !IsFinal(errs[0]) {
		t.Errorf("ErrorHandler(/always503) = %v, want one final outcome", errs)
	}
	if n := g.visits.len(); n != 0 {
		t.Errorf("%d visits left after the crawl, want 0", n)
	}
}
