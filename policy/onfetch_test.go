package policy

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"
)

// onFetchServers returns three sites whose robots.txt is parsed, gone
// (404) and down (503).
func onFetchServers(t *testing.T) (parsed, gone, down *httptest.Server) {
	mk := func(h http.HandlerFunc) *httptest.Server {
		s := httptest.NewServer(h)
		t.Cleanup(s.Close)
		return s
	}
	parsed = mk(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "User-agent: *\nDisallow: /x\n") })
	gone = mk(func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	down = mk(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	return parsed, gone, down
}

// TestCacheOnFetch: OnFetch is told about each fetch once, with what it
// found (parsed, 4xx allow all, 5xx unreachable), and not about the
// look-ups the cache answered.
func TestCacheOnFetch(t *testing.T) {
	parsed, gone, down := onFetchServers(t)
	var mu sync.Mutex
	var got []Entry
	clock := newFakeClock()
	c := &Cache{Now: clock.Now, OnFetch: func(e Entry) {
		mu.Lock()
		got = append(got, e)
		mu.Unlock()
	}}
	ctx := context.Background()
	for _, s := range []*httptest.Server{parsed, gone, down, parsed, gone, down} {
		u, _ := url.Parse(s.URL + "/page")
		c.Get(ctx, u) // the second round is answered from the cache
	}
	clock.Advance(2 * time.Minute) // past down's first RetryAt
	u, _ := url.Parse(down.URL + "/page")
	c.Get(ctx, u)
	c.running.Wait()
	mu.Lock()
	defer mu.Unlock()
	want := []struct {
		origin string
		state  State
		status int
		fails  int
	}{
		{parsed.URL, StateParsed, 200, 0},
		{gone.URL, StateUnavailable, 404, 0},
		{down.URL, StateUnreachable, 503, 1},
		{down.URL, StateUnreachable, 503, 2},
	}
	if len(got) != len(want) {
		t.Fatalf("OnFetch called %d times (%+v), want %d", len(got), got, len(want))
	}
	for i, w := range want {
		e := got[i]
		if e.Origin != w.origin || e.State != w.state || e.StatusCode != w.status || e.Failures != w.fails || e.Robots == nil {
			t.Errorf("OnFetch call %d = %s %v %d failures %d, want %s %v %d failures %d",
				i, e.Origin, e.State, e.StatusCode, e.Failures, w.origin, w.state, w.status, w.fails)
		}
	}
	if got[2].Err == nil {
		t.Errorf("OnFetch for an unreachable robots.txt: Err is nil, want the FetchError")
	}
}
