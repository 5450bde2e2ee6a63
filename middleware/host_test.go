package robotsmw

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestHostKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://Example.COM/a", "example.com"},
		{"http://example.com:8080/", "example.com"},
		{"https://example.com./", "example.com"},
		{"http://[::1]:80/", "::1"},
		{"http://127.0.0.1:9/", "127.0.0.1"},
		{"https://bücher.example/", "xn--bcher-kva.example"},
		{"https://BÜCHER.example./", "xn--bcher-kva.example"},
		{"https://xn--bcher-kva.example/", "xn--bcher-kva.example"},
	}
	for _, tt := range tests {
		if got := hostKey(mustURL(t, tt.in)); got != tt.want {
			t.Errorf("hostKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// grants passes n requests through wait and gate in a row and returns the
// times they passed.
func grants(t *testing.T, g *Guard, c *fakeClock, h *host, n int) []time.Time {
	t.Helper()
	var at []time.Time
	for i := 0; i < n; i++ {
		if err := g.wait(context.Background(), h, false); err != nil {
			t.Fatalf("wait #%d: %v", i, err)
		}
		if err := g.gate(context.Background(), h, false); err != nil {
			t.Fatalf("gate #%d: %v", i, err)
		}
		at = append(at, c.now())
	}
	return at
}

func minGap(at []time.Time) time.Duration {
	gap := time.Duration(1<<63 - 1)
	for i := 1; i < len(at); i++ {
		gap = min(gap, at[i].Sub(at[i-1]))
	}
	return gap
}

func TestWaitPaces(t *testing.T) {
	tests := []struct {
		name       string
		rate       rate.Limit
		crawlDelay time.Duration
		want       time.Duration
	}{
		{"default rate", 0, 0, time.Second},
		{"rate 10/s", 10, 0, 100 * time.Millisecond},
		{"crawl-delay raises floor", 10, 3 * time.Second, 3 * time.Second},
		{"crawl-delay below rate", 0.5, time.Second, 2 * time.Second},
		{"inf", rate.Inf, 0, 0},
		{"inf with crawl-delay", rate.Inf, 2 * time.Second, 2 * time.Second},
	}
	for _, tt := range tests {
		c := newFakeClock()
		g := fakeGuard(&Guard{Rate: tt.rate}, c, 0)
		h := g.host(mustURL(t, "http://example.com/"))
		h.setCrawlDelay(c.now(), "http://example.com", tt.crawlDelay)
		at := grants(t, g, c, h, 20)
		if gap := minGap(at); gap != tt.want {
			t.Errorf("%s: wait spacing = %v, want %v", tt.name, gap, tt.want)
		}
		if got := h.snapshot().Fetched; got != 20 {
			t.Errorf("%s: Fetched = %d, want 20", tt.name, got)
		}
	}
}

func TestWaitHonoursPause(t *testing.T) {
	c := newFakeClock()
	g := fakeGuard(&Guard{Rate: rate.Inf}, c, 0)
	h := g.host(mustURL(t, "http://example.com/"))
	start := c.now()
	pause := h.strike(start, hard, 2*time.Second, true, time.Minute, time.Hour, 0)
	if pause != 2*time.Second {
		t.Fatalf("strike(Retry-After 2s) = %v, want 2s", pause)
	}
	if err := g.wait(context.Background(), h, false); err != nil {
		t.Fatal(err)
	}
	if got := c.now().Sub(start); got < 2*time.Second {
		t.Errorf("wait returned %v after a 2s pause began", got)
	}
}

func TestWaitBounded(t *testing.T) {
	c := newFakeClock()
	g := fakeGuard(&Guard{Rate: rate.Every(time.Hour)}, c, 0)
	h := g.host(mustURL(t, "http://example.com/"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := g.wait(ctx, h, true); err != nil {
		t.Fatalf("first wait(bounded) = %v, want nil", err)
	}
	if err := g.gate(ctx, h, true); err != nil {
		t.Fatalf("first gate(bounded) = %v, want nil", err)
	}
	err := g.wait(ctx, h, true)
	var hd *hopDeferredError
	if !errors.As(err, &hd) || !errors.Is(err, errHostBusy) {
		t.Fatalf("wait(bounded) on a busy limiter = %v, want hopDeferredError(errHostBusy)", err)
	}
	if want := c.now().Add(time.Hour); hd.until.Before(want.Add(-time.Second)) {
		t.Errorf("hopDeferredError.until = %v, want about %v", hd.until, want)
	}
	// The gate spaces sends by the interval even when the limiter is
	// bypassed, e.g. by requests that bunched up behind a LimitRule slot.
	if err := g.gate(ctx, h, true); !errors.Is(err, errHostBusy) {
		t.Errorf("second gate(bounded) within the interval = %v, want errHostBusy", err)
	}
	h.strike(c.now(), hard, 0, false, time.Minute, time.Hour, 0)
	if err := g.wait(ctx, h, true); !errors.Is(err, errHostPaused) {
		t.Errorf("wait(bounded) on a paused host = %v, want errHostPaused", err)
	}
	if err := g.gate(ctx, h, true); !errors.Is(err, errHostPaused) {
		t.Errorf("gate(bounded) on a paused host = %v, want errHostPaused", err)
	}
}

func TestWaitContextEnds(t *testing.T) {
	g := &Guard{Rate: rate.Every(time.Hour)} // real clock and sleep
	h := g.host(mustURL(t, "http://example.com/"))
	if err := g.wait(context.Background(), h, false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- g.wait(ctx, h, false) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("wait after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("wait did not end when its context was cancelled")
	}
	// The cancelled reservation is handed back: the next one is not pushed
	// further than one interval.
	if r := h.lim.Reserve(); r.Delay() > time.Hour+time.Second {
		t.Errorf("after cancel, next delay = %v, want ≤ 1h", r.Delay())
	}
}

func TestStrike(t *testing.T) {
	const base, limit = 10 * time.Second, 5 * time.Minute
	c := newFakeClock()
	h := newHost("example.com", time.Second)
	now := c.now()

	// First hard strike: own back-off, interval doubled (rate × 0.5).
	if p := h.strike(now, hard, 0, false, base, limit, 0); p != base {
		t.Errorf("strike #1 = %v, want %v", p, base)
	}
	if h.interval != 2*time.Second || h.lim.Limit() != rate.Every(2*time.Second) {
		t.Errorf("after strike #1 interval = %v, limit %v; want 2s", h.interval, h.lim.Limit())
	}
	// Same incident (arriving during the pause): no cut, no new strike.
	if p := h.strike(now.Add(500*time.Millisecond), hard, 0, false, base, limit, 0); p != base {
		t.Errorf("strike in the same epoch = %v, want %v", p, base)
	}
	if h.interval != 2*time.Second || h.strikes != 1 {
		t.Errorf("after a repeated strike interval = %v, strikes = %d; want 2s, 1", h.interval, h.strikes)
	}
	// A new incident after the pause: the back-off doubles, the rate halves again.
	now = now.Add(base + time.Second)
	if p := h.strike(now, hard, 0, false, base, limit, 0); p != 2*base {
		t.Errorf("strike #2 = %v, want %v", p, 2*base)
	}
	if h.interval != 4*time.Second {
		t.Errorf("after strike #2 interval = %v, want 4s", h.interval)
	}
	if want := now.Add(2 * base); !h.pauseUntil.Equal(want) {
		t.Errorf("pauseUntil = %v, want %v", h.pauseUntil, want)
	}
	// Retry-After is never shortened by a shorter one: pauses merge by max.
	end := h.pauseUntil
	h.strike(now.Add(5*time.Second), hard, time.Second, true, base, limit, 0)
	if !h.pauseUntil.Equal(end) {
		t.Errorf("a shorter Retry-After moved pauseUntil from %v to %v", end, h.pauseUntil)
	}
	// Retry-After beyond the back-off cap is honoured in full.
	now = now.Add(time.Minute)
	if p := h.strike(now, hard, 2*time.Hour, true, base, limit, 0); p != 2*time.Hour {
		t.Errorf("strike(Retry-After 2h) = %v, want 2h", p)
	}
	// Retry-After 0 still waits one interval.
	h2 := newHost("b.example", time.Second)
	if p := h2.strike(now, hard, 0, true, base, limit, 0); p != time.Second {
		t.Errorf("strike(Retry-After 0) = %v, want one interval (1s)", p)
	}
	// Soft failures: a sixth of the base, rate × 0.8.
	h3 := newHost("c.example", time.Second)
	if p := h3.strike(now, soft, 0, false, base*6, limit, 0); p != base {
		t.Errorf("soft strike = %v, want %v", p, base)
	}
	if h3.interval != 1250*time.Millisecond {
		t.Errorf("after soft strike interval = %v, want 1.25s", h3.interval)
	}
	// Beyond 24 h the host is excluded.
	h4 := newHost("d.example", time.Second)
	h4.strike(now, hard, 48*time.Hour, true, base, limit, 0)
	g := fakeGuard(&Guard{}, c, 0)
	if err := g.wait(context.Background(), h4, false); !errors.Is(err, ErrGaveUp) {
		t.Errorf("wait on a host paused for 48h = %v, want ErrGaveUp", err)
	}
}

func TestStrikesForgiven(t *testing.T) {
	h := newHost("example.com", time.Second)
	now := newFakeClock().now()
	for i := 0; i < 3; i++ {
		now = now.Add(time.Minute)
		h.strike(now, hard, 0, false, time.Second, time.Hour, 0)
	}
	now = now.Add(forgiveAfter + time.Second)
	if p := h.strike(now, hard, 0, false, time.Second, time.Hour, 0); p != time.Second {
		t.Errorf("strike after %v quiet = %v, want the base again", forgiveAfter, p)
	}
}

func TestRecovery(t *testing.T) {
	tests := []struct {
		name  string
		floor time.Duration
	}{
		{"limited", time.Second},
		{"unlimited", 0},
	}
	for _, tt := range tests {
		h := newHost("example.com", tt.floor)
		now := newFakeClock().now()
		h.strike(now, hard, 0, false, time.Second, time.Hour, 0)
		cut := h.interval
		if cut <= tt.floor {
			t.Fatalf("%s: interval after a cut = %v, want > %v", tt.name, cut, tt.floor)
		}
		prev, steps := cut, 0
		for h.cut && steps < 1000 {
			for i := 0; i < recoverAfter; i++ {
				now = now.Add(time.Second)
				h.healthy(now)
			}
			if h.interval > prev {
				t.Fatalf("%s: healthy responses raised interval from %v to %v", tt.name, prev, h.interval)
			}
			prev = h.interval
			steps++
		}
		if h.cut || h.interval != tt.floor || h.lim.Limit() != every(tt.floor) {
			t.Errorf("%s: after recovery interval = %v, limit %v, cut %v; want %v", tt.name, h.interval, h.lim.Limit(), h.cut, tt.floor)
		}
		if steps < 2 {
			t.Errorf("%s: recovered in %d step(s), want gradual recovery", tt.name, steps)
		}
	}
}

func TestSetCrawlDelay(t *testing.T) {
	h := newHost("example.com", time.Second)
	now := newFakeClock().now()
	h.setCrawlDelay(now, "http://example.com", 5*time.Second)
	h.setCrawlDelay(now, "https://example.com", 2*time.Second)
	if h.floor != 5*time.Second || h.interval != 5*time.Second {
		t.Errorf("floor, interval = %v, %v; want the largest Crawl-delay, 5s", h.floor, h.interval)
	}
	h.setCrawlDelay(now, "http://example.com", 0)
	if h.floor != 2*time.Second {
		t.Errorf("floor = %v after one origin dropped its Crawl-delay, want 2s", h.floor)
	}
	h.setCrawlDelay(now, "https://example.com", 0)
	if h.floor != time.Second {
		t.Errorf("floor = %v without Crawl-delay, want Rate's 1s", h.floor)
	}
}
