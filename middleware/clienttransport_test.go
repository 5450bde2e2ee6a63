package robotsmw

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/policy"
)

// A disallowed request through Guard.Transport fails with ErrDisallowed
// and is never sent; an allowed one is.
func TestTransportDisallowed(t *testing.T) {
	s := newSite(t, robots("User-agent: *\nDisallow: /private\n", nil))
	g := &Guard{Rate: rate.Inf}
	client := &http.Client{Transport: g.Transport(nil)}
	_, err := client.Get(s.URL + "/private/x")
	var de *DisallowedError
	if !errors.Is(err, ErrDisallowed) || !errors.As(err, &de) {
		t.Errorf("Get(/private/x) = %v, want a *DisallowedError", err)
	}
	if n := s.count("/private/x"); n != 0 {
		t.Errorf("server saw /private/x %d times, want 0", n)
	}
	resp, err := client.Get(s.URL + "/public")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("Get(/public) = %v, %v, want 200", resp, err)
	}
	resp.Body.Close()
	if n := s.count("/robots.txt"); n != 1 {
		t.Errorf("robots.txt fetched %d times, want 1", n)
	}
	// A path with dot segments is checked as the server reads it: net/http
	// sends it as written, and servers resolve it to /private/x.
	for _, p := range []string{"/public/../private/x", "/public/%2e%2E/private/x", "/./private/x", "/a/./../private/x"} {
		_, err := client.Get(s.URL + p)
		if !errors.As(err, &de) || de.Decision.Rule == nil || de.Decision.Rule.Line != 2 || de.URL.EscapedPath() != p {
			t.Errorf("Get(%s) = %v, want a *DisallowedError by line 2 naming the URL as given", p, err)
		}
	}
	if log := s.log(); len(log) != 2 {
		t.Errorf("server saw %v, want robots.txt and /public only", log)
	}
}

// A GET answered 503 with Retry-After is sent again after the pause (on
// the Guard's clock) and the pause shows in Stats; a host that keeps
// answering 429 gets MaxRetries retries, then its last response.
func TestTransportRetriesThrottled(t *testing.T) {
	var busy, always atomic.Int32
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		switch r.URL.Path {
		case "/busy":
			if busy.Add(1) == 1 {
				w.Header().Set("Retry-After", "7")
				w.WriteHeader(http.StatusServiceUnavailable)
				return true
			}
		case "/always":
			always.Add(1)
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		}
		return false
	}))
	clk := newFakeClock()
	g := fakeGuard(&Guard{Rate: rate.Inf, MaxRetries: 2, MaxRobotsFailures: 2}, clk, 0)
	client := &http.Client{Transport: g.Transport(nil)}
	start := clk.now()
	resp, err := client.Get(s.URL + "/busy")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("Get(/busy) = %v, %v, want 200 after the pause", resp, err)
	}
	resp.Body.Close()
	if d := clk.now().Sub(start); d < 7*time.Second {
		t.Errorf("Get(/busy) returned %v after the 503 on the Guard's clock, want ≥ Retry-After 7s", d)
	}
	if n := s.count("/busy"); n != 2 {
		t.Errorf("server saw /busy %d times, want 2", n)
	}
	if hs := hostStats(g, "127.0.0.1"); hs.Retried != 1 || hs.Backoffs != 1 {
		t.Errorf("Stats = %+v, want Retried 1, Backoffs 1", hs)
	}
	resp, err = client.Get(s.URL + "/always")
	if err != nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("Get(/always) = %v, %v, want the last 429", resp, err)
	}
	resp.Body.Close()
	if n := always.Load(); n != 3 {
		t.Errorf("server saw /always %d times, want 1 + MaxRetries 2", n)
	}
	// Not a GET or HEAD: not sent again.
	before := always.Load()
	resp, err = client.Post(s.URL+"/always", "text/plain", nil)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("Post(/always) = %v, %v, want 429", resp, err)
	}
	resp.Body.Close()
	if n := always.Load() - before; n != 1 {
		t.Errorf("POST /always sent %d times, want 1", n)
	}
}

// A Retry-After beyond 24 hours is not waited for.
func TestTransportHugeRetryAfter(t *testing.T) {
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Retry-After", fmt.Sprint(48*3600))
		w.WriteHeader(http.StatusServiceUnavailable)
		return true
	}))
	clk := newFakeClock()
	g := fakeGuard(&Guard{Rate: rate.Inf}, clk, 0)
	client := &http.Client{Transport: g.Transport(nil)}
	_, err := client.Get(s.URL + "/x")
	if !errors.Is(err, ErrGaveUp) || !strings.Contains(fmt.Sprint(err), "paused until") {
		t.Errorf("Get(/x) = %v, want ErrGaveUp naming the pause's end", err)
	}
	if n := s.count("/x"); n != 1 {
		t.Errorf("server saw /x %d times, want 1", n)
	}
	if st := g.Stats().Total; st.GaveUp != 1 || st.Retried != 0 {
		t.Errorf("Stats().Total GaveUp, Retried = %d, %d after Get(/x) gave up unretried, want 1, 0", st.GaveUp, st.Retried)
	}
}

// Requests through Guard.Transport and through a colly collector attached
// to the same Guard share one schedule per host: together they never pass
// the gate faster than Rate.
func TestTransportSharesHostsWithColly(t *testing.T) {
	s := newSite(t, robots("", nil))
	g := &Guard{Rate: 20}
	sent := recordSends(g)
	c := colly.NewCollector(g.Attach, colly.Async())
	client := &http.Client{Transport: g.Transport(nil)}
	var wg sync.WaitGroup
	for i := 0; i < 5; i++ {
		c.Visit(fmt.Sprintf("%s/c%d", s.URL, i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := client.Get(fmt.Sprintf("%s/t%d", s.URL, i))
			if err != nil {
				t.Errorf("Get(/t%d) = %v", i, err)
				return
			}
			resp.Body.Close()
		}()
	}
	wg.Wait()
	c.Wait()
	gaps := sent.gaps()
	if len(gaps) != 10 { // robots.txt and 10 pages
		t.Errorf("%d requests passed the gate, want 11", len(gaps)+1)
	}
	for i, gap := range gaps {
		if gap < 50*time.Millisecond-slack {
			t.Errorf("gap %d between sends = %v, want ≥ 50ms across colly and the Transport", i, gap)
		}
	}
	if n := s.count("/robots.txt"); n != 1 {
		t.Errorf("robots.txt fetched %d times, want 1", n)
	}
}

func TestTransportRobotsUnreachable(t *testing.T) {
	// A host whose robots.txt cannot be fetched: the request fails at
	// once with ErrRobotsUnreachable and the network cause, instead of
	// waiting for robots.txt's next try until its deadline.
	s := newSite(t, robots("", nil))
	dead := s.URL
	s.Close()
	g := &Guard{Rate: rate.Inf}
	client := &http.Client{Transport: g.Transport(nil)}
	_, err := client.Get(dead + "/page")
	var fe *policy.FetchError
	if !errors.Is(err, ErrRobotsUnreachable) || !errors.As(err, &fe) {
		t.Errorf("Get(dead host) = %v, want ErrRobotsUnreachable with the *policy.FetchError", err)
	}
}
