package robotsmw

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
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
	u := mustURL(t, "http://"+h.name+"/")
	var at []time.Time
	for i := 0; i < n; i++ {
		if err := g.wait(context.Background(), h, u, time.Hour, false); err != nil {
			t.Fatalf("wait #%d: %v", i, err)
		}
		if err := g.gateEnded(context.Background(), h, u, time.Hour); err != nil {
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
		h.setCrawlDelay("http://example.com", tt.crawlDelay, g.rateFloor())
		at := grants(t, g, c, h, 20)
		if gap := minGap(at); gap != tt.want {
			t.Errorf("%s: wait spacing = %v, want %v", tt.name, gap, tt.want)
		}
		if got := h.snapshot().Sent; got != 20 {
			t.Errorf("%s: Sent = %d, want 20", tt.name, got)
		}
	}
}

func TestWaitHonoursPause(t *testing.T) {
	c := newFakeClock()
	g := fakeGuard(&Guard{Rate: rate.Inf}, c, 0)
	u := mustURL(t, "http://example.com/")
	h := g.host(u)
	start := c.now()
	pause, _ := h.strike(start, hard, 2*time.Second, true, time.Minute, time.Hour, 0, 0)
	if pause != 2*time.Second {
		t.Fatalf("strike(Retry-After 2s) = %v, want 2s", pause)
	}
	if err := g.wait(context.Background(), h, u, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	if got := c.now().Sub(start); got < 2*time.Second {
		t.Errorf("wait returned %v after a 2s pause began", got)
	}
}

// A wait longer than the limit is deferred at once, to the slot the
// request keeps; the gate defers the same way; a pause defers to its end.
// A deferral while the host's pause holds names the pause, even when the
// request's slot comes some spacing after the pause's end.
func TestDeferralWhilePausedNamesThePause(t *testing.T) {
	c := newFakeClock()
	g := fakeGuard(&Guard{}, c, 0)
	u := mustURL(t, "http://example.com/")
	h := g.host(u)
	now := c.now().UnixNano()
	pause := now + int64(2*time.Minute)
	for _, tc := range []struct {
		name       string
		start, pau int64
		paused     bool
	}{
		{"slot at the pause's end", pause, pause, true},
		{"slot a second after the pause's end", pause + int64(time.Second), pause, true},
		{"no pause", now + int64(time.Minute), 0, false},
		{"a pause that is over", now + int64(time.Minute), now - 1, false},
	} {
		err := g.deferred(h, u, tc.start, tc.pau, now, false)
		if got := strings.Contains(err.Error(), "paused until"); got != tc.paused || errors.Is(err, errHostBusy) == tc.paused {
			t.Errorf("%s: deferred = %v; want the pause named: %v", tc.name, err, tc.paused)
		}
	}
}

func TestWaitBeyondLimitDefers(t *testing.T) {
	c := newFakeClock()
	g := fakeGuard(&Guard{Rate: rate.Every(time.Hour)}, c, 0)
	u := mustURL(t, "http://example.com/")
	h := g.host(u)
	const limit = 10 * time.Second
	if err := g.wait(context.Background(), h, u, limit, false); err != nil {
		t.Fatalf("first wait = %v, want nil", err)
	}
	if err := g.gateEnded(context.Background(), h, u, limit); err != nil {
		t.Fatalf("first gate = %v, want nil", err)
	}
	start := c.now()
	err := g.wait(context.Background(), h, u, limit, false)
	var de *DeferredError
	if !errors.As(err, &de) || !errors.Is(err, errHostBusy) || !errors.Is(err, ErrDeferred) {
		t.Fatalf("wait on a busy host = %v, want a DeferredError(errHostBusy)", err)
	}
	if want := start.Add(time.Hour); !de.Until.Equal(want) || !de.reserved {
		t.Errorf("DeferredError.Until = %v (reserved %v), want %v, reserved", de.Until, de.reserved, want)
	}
	if c.now() != start {
		t.Errorf("wait slept %v before deferring", c.now().Sub(start))
	}
	// The deferred request kept its slot: the next one comes after it.
	err = g.wait(context.Background(), h, u, limit, false)
	if !errors.As(err, &de) || !de.Until.Equal(start.Add(2*time.Hour)) {
		t.Errorf("next wait = %v, want deferred to the slot after (%v)", err, start.Add(2*time.Hour))
	}
	// The gate spaces sends by the interval even when the schedule is
	// bypassed, e.g. by requests that bunched up behind a LimitRule slot.
	if err := g.gateEnded(context.Background(), h, u, limit); !errors.Is(err, errHostBusy) {
		t.Errorf("second gate within the interval = %v, want errHostBusy", err)
	}
	g.strike(h, c.now(), hard, http.Header{"Retry-After": {"10800"}})
	if err := g.wait(context.Background(), h, u, limit, true); !strings.Contains(fmt.Sprint(err), "paused until") {
		t.Errorf("wait on a paused host = %v, want the pause as its cause", err)
	}
	// The gate of another request takes the next position, an interval
	// after the pause's end.
	if err := g.gateEnded(context.Background(), h, u, limit); !errors.As(err, &de) || de.Until.Before(c.now().Add(3*time.Hour)) {
		t.Errorf("gate on a paused host = %v, want a deferral past the pause's end", err)
	}
	// Deferrals are counted as they reach OnError (Guard.outcome), not
	// where they are decided.
	if got := h.snapshot().Deferred; got != 0 {
		t.Errorf("Deferred = %d after five deferrals no request delivered, want 0", got)
	}
}

func TestWaitContextEnds(t *testing.T) {
	g := &Guard{Rate: rate.Every(time.Hour)} // real clock and sleep
	u := mustURL(t, "http://example.com/")
	h := g.host(u)
	if err := g.wait(context.Background(), h, u, 2*time.Hour, false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- g.wait(ctx, h, u, 2*time.Hour, false) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrGaveUp) {
			t.Errorf("wait after cancel = %v, want ErrGaveUp and context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("wait did not end when its context was cancelled")
	}
}

// A strike voids the schedule: a waiter sleeping for a position far away
// wakes at once (here to be deferred to the pause's end). With
// rate.Limiter's reservations the slot stayed taken, and the host sat
// idle (defect 2: seconds of silence after one 429).
func TestStrikeWakesWaiters(t *testing.T) {
	g := &Guard{Rate: rate.Every(time.Hour)} // real clock and sleep
	u := mustURL(t, "http://example.com/")
	h := g.host(u)
	if err := g.wait(context.Background(), h, u, 2*time.Hour, false); err != nil {
		t.Fatal(err)
	}
	if err := g.gateEnded(context.Background(), h, u, 2*time.Hour); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- g.wait(context.Background(), h, u, 2*time.Hour, false) }()
	for {
		h.mu.Lock()
		w := h.waiters
		h.mu.Unlock()
		if w == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	g.strike(h, time.Now(), hard, http.Header{"Retry-After": {"10800"}})
	select {
	case err := <-done:
		if !strings.Contains(fmt.Sprint(err), "paused until") {
			t.Errorf("wait after the strike = %v, want a deferral to the pause's end", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter was not woken by the strike")
	}
}

func strike(h *host, now time.Time, c class, ra time.Duration, raOK bool, base, limit time.Duration) time.Duration {
	p, _ := h.strike(now, c, ra, raOK, base, limit, time.Second, 0)
	return p
}

func TestStrike(t *testing.T) {
	const base, limit = 10 * time.Second, 5 * time.Minute
	c := newFakeClock()
	h := newHost("example.com", time.Second, 0)
	now := c.now()

	// First hard strike: own back-off, interval doubled (rate × 0.5).
	if p := strike(h, now, hard, 0, false, base, limit); p != base {
		t.Errorf("strike case 1 = %v, want %v", p, base)
	}
	if h.interval != 2*time.Second {
		t.Errorf("after strike case 1 interval = %v; want 2s", h.interval)
	}
	// Same incident (arriving during the pause): no cut, no new strike.
	if p := strike(h, now.Add(500*time.Millisecond), hard, 0, false, base, limit); p != base {
		t.Errorf("strike in the same epoch = %v, want %v", p, base)
	}
	if h.interval != 2*time.Second || h.t.strikes != 1 {
		t.Errorf("after a repeated strike interval = %v, strikes = %d; want 2s, 1", h.interval, h.t.strikes)
	}
	// A new incident after the pause: the back-off doubles, the rate halves again.
	now = now.Add(base + time.Second)
	if p := strike(h, now, hard, 0, false, base, limit); p != 2*base {
		t.Errorf("strike case 2 = %v, want %v", p, 2*base)
	}
	if h.interval != 4*time.Second {
		t.Errorf("after strike case 2 interval = %v, want 4s", h.interval)
	}
	if want := now.Add(2 * base).UnixNano(); h.pauseUntil != want {
		t.Errorf("pauseUntil = %v; want %v", h.pauseUntil, want)
	}
	// Retry-After is never shortened by a shorter one: pauses merge by max.
	end := h.pauseUntil
	strike(h, now.Add(5*time.Second), hard, time.Second, true, base, limit)
	if h.pauseUntil != end {
		t.Errorf("a shorter Retry-After moved pauseUntil from %v to %v", end, h.pauseUntil)
	}
	// Retry-After beyond the back-off cap is honoured in full.
	now = now.Add(time.Minute)
	if p := strike(h, now, hard, 2*time.Hour, true, base, limit); p != 2*time.Hour {
		t.Errorf("strike(Retry-After 2h) = %v, want 2h", p)
	}
	// Soft failures: a sixth of the base, rate × 0.8 — exactly, also for a
	// fast host (minCutInterval only applies to an unlimited one).
	h3 := newHost("c.example", 25*time.Millisecond, 0)
	if p, _ := h3.strike(now, soft, 0, false, base*6, limit, 25*time.Millisecond, 0); p != base {
		t.Errorf("soft strike = %v, want %v", p, base)
	}
	if want := 25 * time.Millisecond * 5 / 4; h3.interval != want {
		t.Errorf("after soft strike of a 25ms host interval = %v, want %v (rate × 0.8)", h3.interval, want)
	}
	h5 := newHost("e.example", 0, 0)
	h5.strike(now, hard, 0, false, base, limit, 0, 0)
	if h5.interval != 2*minCutInterval {
		t.Errorf("after a cut of an unlimited host interval = %v, want %v", h5.interval, 2*minCutInterval)
	}
	// Beyond 24 h the host is excluded.
	h4 := newHost("d.example", time.Second, 0)
	strike(h4, now, hard, 48*time.Hour, true, base, limit)
	g := fakeGuard(&Guard{}, c, 0)
	err := g.wait(context.Background(), h4, mustURL(t, "http://d.example/"), time.Minute, false)
	if !errors.Is(err, ErrGaveUp) || !strings.Contains(fmt.Sprint(err), "paused until "+now.Add(48*time.Hour).UTC().Format(time.RFC3339)) {
		t.Errorf("wait on a host paused for 48h = %v, want ErrGaveUp with the pause's end", err)
	}
}

func TestStrikesForgiven(t *testing.T) {
	h := newHost("example.com", time.Second, 0)
	now := newFakeClock().now()
	for i := 0; i < 3; i++ {
		now = now.Add(time.Minute)
		strike(h, now, hard, 0, false, time.Second, time.Hour)
	}
	now = now.Add(forgiveAfter + time.Second)
	if p := strike(h, now, hard, 0, false, time.Second, time.Hour); p != time.Second {
		t.Errorf("strike after %v quiet = %v, want the base again", forgiveAfter, p)
	}
}

// Strikes count in a row: a healthy response after the pause ends the
// run, and the next failure pauses for the base again. Healthy responses
// that arrive during the pause (sent before it) do not.
func TestHealthyResponseResetsStrikes(t *testing.T) {
	h := newHost("example.com", time.Second, 0)
	now := newFakeClock().now()
	base, limit := time.Second, time.Hour
	strike(h, now, hard, 0, false, base, limit)
	now = now.Add(2 * time.Second)
	if p := strike(h, now, hard, 0, false, base, limit); p != 2*base {
		t.Fatalf("second strike in a row = %v, want %v", p, 2*base)
	}
	during := now.Add(time.Second) // the pause lasts until now+2s
	for i := 0; i < recoverAfter; i++ {
		h.healthy(func() time.Time { return during })
	}
	now = now.Add(3 * time.Second)
	if p := strike(h, now, hard, 0, false, base, limit); p != 4*base {
		t.Errorf("strike after healthy responses during the pause = %v, want %v (same run)", p, 4*base)
	}
	now = now.Add(5 * time.Second)
	h.healthy(func() time.Time { return now })
	now = now.Add(time.Second)
	if p := strike(h, now, hard, 0, false, base, limit); p != base {
		t.Errorf("strike after a healthy response = %v, want the base %v", p, base)
	}
	if !h.t.cut || h.interval <= time.Second {
		t.Errorf("interval %v (cut %v): one healthy response must not undo the rate cut", h.interval, h.t.cut)
	}
}

// A cut never spaces requests further apart than MaxBackoff (the limit)
// when that is below maxInterval, nor faster than the floor.
func TestCutCappedByMaxBackoff(t *testing.T) {
	h := newHost("example.com", 2*time.Second, 0)
	now := newFakeClock().now()
	for i := 0; i < 10; i++ {
		now = now.Add(time.Hour)
		h.strike(now, hard, 0, false, time.Second, 5*time.Second, 2*time.Second, 0)
	}
	if h.interval != 5*time.Second {
		t.Errorf("interval after 10 hard strikes with MaxBackoff 5s = %v, want 5s", h.interval)
	}
	slow := newHost("slow.example", 10*time.Second, 0)
	slow.strike(now, hard, 0, false, time.Second, 5*time.Second, 10*time.Second, 0)
	if slow.interval != 10*time.Second {
		t.Errorf("interval of a host with floor 10s cut under MaxBackoff 5s = %v, want the floor", slow.interval)
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
		h := newHost("example.com", tt.floor, 0)
		now := newFakeClock().now()
		h.strike(now, hard, 0, false, time.Second, time.Hour, tt.floor, 0)
		cut := h.interval
		if cut <= tt.floor {
			t.Fatalf("%s: interval after a cut = %v, want > %v", tt.name, cut, tt.floor)
		}
		prev, steps := cut, 0
		for h.t != nil && h.t.cut && steps < 1000 {
			for i := 0; i < recoverAfter; i++ {
				now = now.Add(time.Second)
				h.healthy(func() time.Time { return now })
			}
			if h.interval > prev {
				t.Fatalf("%s: healthy responses raised interval from %v to %v", tt.name, prev, h.interval)
			}
			prev = h.interval
			steps++
		}
		if h.t != nil && h.t.cut || h.interval != tt.floor {
			t.Errorf("%s: after recovery interval = %v; want %v", tt.name, h.interval, tt.floor)
		}
		if steps < 2 {
			t.Errorf("%s: recovered in %d step(s), want gradual recovery", tt.name, steps)
		}
		// Once its strikes are forgiven, the host drops its trouble state.
		h.healthy(func() time.Time { return now.Add(forgiveAfter + time.Second) })
		if h.t != nil {
			t.Errorf("%s: trouble state kept after the strikes were forgiven", tt.name)
		}
	}
}

func TestSetCrawlDelay(t *testing.T) {
	h := newHost("example.com", time.Second, 0)
	const rf = time.Second
	h.setCrawlDelay("http://example.com", 5*time.Second, rf)
	h.setCrawlDelay("https://example.com", 2*time.Second, rf)
	if h.floor(rf) != 5*time.Second || h.interval != 5*time.Second {
		t.Errorf("floor, interval = %v, %v; want the largest Crawl-delay, 5s", h.floor(rf), h.interval)
	}
	h.setCrawlDelay("http://example.com", 0, rf)
	if h.floor(rf) != 2*time.Second {
		t.Errorf("floor = %v after one origin dropped its Crawl-delay, want 2s", h.floor(rf))
	}
	h.setCrawlDelay("https://example.com", 0, rf)
	if h.floor(rf) != time.Second {
		t.Errorf("floor = %v without Crawl-delay, want Rate's 1s", h.floor(rf))
	}
}

// hostStats returns the statistics of the host named name.
func hostStats(g *Guard, name string) HostStats {
	s, _ := g.hostStats(name)
	return s
}

// Defect 2: after a strike, the host's schedule restarts at the end of the
// pause, with the cut interval, and has no hole: the slots taken before
// the strike (30 requests at 40/s) are void, not kept as rate.Limiter
// keeps cancelled reservations. A soft strike cuts the rate to 0.8
// exactly (25 ms → 31.25 ms), not to a minimum of 125 ms.
func TestStrikeVoidsSchedule(t *testing.T) {
	c := newFakeClock()
	g := fakeGuard(&Guard{Rate: 40, Backoff: 200 * time.Millisecond}, c, 0)
	u := mustURL(t, "http://example.com/")
	h := g.host(u)
	slot := func() time.Time {
		t.Helper()
		// A limit of 0 defers each request to the slot it takes.
		var de *DeferredError
		if err := g.wait(context.Background(), h, u, 0, false); !errors.As(err, &de) {
			if err == nil {
				return c.now()
			}
			t.Fatalf("wait = %v", err)
		}
		return de.Until
	}
	for i := 0; i < 30; i++ {
		slot()
	}
	g.strike(h, c.now(), soft, nil) // a 500: pause of Backoff/6, rate × 0.8
	h.mu.Lock()
	pauseUntil, interval := time.Unix(0, h.pauseUntil), h.interval
	h.mu.Unlock()
	if interval != 31250*time.Microsecond {
		t.Errorf("interval after a soft strike = %v, want 31.25ms", interval)
	}
	var last time.Time
	for i := 0; i < 30; i++ {
		last = slot()
		if i == 0 && !last.Equal(pauseUntil) {
			t.Errorf("first slot after the strike = %v, want the pause's end %v", last, pauseUntil)
		}
	}
	if want := pauseUntil.Add(29 * interval); !last.Equal(want) {
		t.Errorf("30th slot after the strike = +%v, want +%v after the pause", last.Sub(pauseUntil), want.Sub(pauseUntil))
	}
}
