package policy

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCacheLogger: each fetch is logged, a verdict at Info and a failure
// at Warn with its failures, next try and whether the last good copy stays.
func TestCacheLogger(t *testing.T) {
	var fail atomic.Bool
	srv, _ := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			w.WriteHeader(503)
			return
		}
		fmt.Fprint(w, testRules)
	})
	clock := newFakeClock()
	c := newCache(t, clock)
	var buf bytes.Buffer
	c.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	u := urlOf(t, srv.URL+"/")
	c.Get(context.Background(), u)
	fail.Store(true)
	clock.Advance(25 * time.Hour)
	c.Get(context.Background(), u) // starts the refresh
	c.running.Wait()

	at := func(d time.Duration) string { return clock.Now().Add(d).UTC().Format("2006-01-02T15:04:05.000Z07:00") }
	want := fmt.Sprintf(`level=INFO msg="robots.txt fetched" origin=%[1]s status=200 state=parsed expires=%[2]s
level=WARN msg="robots.txt unreachable" origin=%[1]s status=503 error="policy: robots.txt %[1]s/robots.txt: 503 Service Unavailable" failures=1 next_fetch=%[3]s stale=true
`, srv.URL, at(-time.Hour), at(time.Minute))
	if got := buf.String(); got != want {
		t.Errorf("Cache.Logger got\n%s\nwant\n%s", got, want)
	}

	// Without a Logger nothing is logged, and a level that is off gets nothing.
	buf.Reset()
	c2 := newCache(t, clock)
	c2.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelError}))
	c2.Get(context.Background(), u)
	if strings.TrimSpace(buf.String()) != "" {
		t.Errorf("Cache.Logger at Error got %q", buf.String())
	}
}

// A robots.txt that never answers is not silent until its fetch times
// out: "robots.txt slow" comes after a sixth of the timeout, and the
// failure says which timeout ran out and its value.
func TestCacheLogSlowFetch(t *testing.T) {
	stall := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stall:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(stall)
	var buf syncBuffer
	c := &Cache{Timeout: 300 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&buf, nil))}
	e, err := c.Get(context.Background(), urlOf(t, srv.URL+"/page"))
	c.running.Wait()
	if e.State != StateUnreachable || err == nil || !strings.Contains(err.Error(), "no answer within 300ms (the robots.txt fetch's timeout)") {
		t.Errorf("Get of a robots.txt that never answers: state %v, error %v; want unreachable, naming the timeout and its value", e.State, err)
	}
	log := buf.String()
	for _, want := range []string{`msg="robots.txt slow"`, "waited=50ms", "timeout=300ms", `msg="robots.txt unreachable"`} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

// A syncBuffer is a bytes.Buffer safe for the log's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
