package policy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
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

// TestCacheStats: each fetch counts once, by what it found (parsed, 4xx
// allow all, 5xx unreachable), look-ups the cache answered count nothing,
// and an origin is unreachable until a fetch gives a verdict again.
func TestCacheStats(t *testing.T) {
	parsed, gone, _ := onFetchServers(t)
	var downNow atomic.Bool
	downNow.Store(true)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if downNow.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "User-agent: *\nAllow: /\n")
	}))
	t.Cleanup(down.Close)
	clock := newFakeClock()
	c := &Cache{Now: clock.Now}
	ctx := context.Background()
	get := func(s *httptest.Server) {
		u, _ := url.Parse(s.URL + "/page")
		c.Get(ctx, u)
	}
	for _, s := range []*httptest.Server{parsed, gone, down, parsed, gone, down} {
		get(s) // the second round is answered from the cache
	}
	clock.Advance(2 * time.Minute) // past down's first RetryAt
	get(down)
	c.running.Wait()
	if got, want := c.Stats(), (FetchStats{Parsed: 1, AllowAll: 1, Status5xx: 2, Unreachable: 1}); got != want {
		t.Errorf("Stats() = %+v, want %+v", got, want)
	}
	downNow.Store(false)
	clock.Advance(10 * time.Minute)
	get(down)
	c.running.Wait()
	if got, want := c.Stats(), (FetchStats{Parsed: 2, AllowAll: 1, Status5xx: 2}); got != want {
		t.Errorf("Stats() after a verdict = %+v, want %+v", got, want)
	}
}

// isTimeout tells a timeout in a chain of wrapped errors.
func TestIsTimeout(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{context.DeadlineExceeded, true},
		{fmt.Errorf("x: %w", errors.Join(errors.New("y"), timeoutError{})), true},
		{errors.New("connection refused"), false},
	} {
		if got := isTimeout(tc.err); got != tc.want {
			t.Errorf("isTimeout(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// timeoutError is a net.Error that timed out.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }
