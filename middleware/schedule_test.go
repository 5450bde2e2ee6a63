package robotsmw

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/pace"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"
)

// sharedGuards returns n Guards on clock c that share one pace.Memory.
func sharedGuards(c *fakeClock, n int, r rate.Limit) ([]*Guard, *pace.Memory) {
	p := &pace.Memory{Now: c.now}
	gs := make([]*Guard, n)
	for i := range gs {
		gs[i] = fakeGuard(&Guard{Rate: r, Pacer: p}, c, 0)
	}
	return gs, p
}

// gateOnce passes one request to u through g's wait and gate and returns
// when it passed.
func gateOnce(t *testing.T, g *Guard, c *fakeClock, u string) time.Time {
	t.Helper()
	pu := mustURL(t, u)
	h := g.host(pu)
	if err := g.wait(context.Background(), h, pu, time.Hour, false); err != nil {
		t.Fatalf("wait(%s): %v", u, err)
	}
	if err := g.gateEnded(context.Background(), h, pu, time.Hour); err != nil {
		t.Fatalf("gate(%s): %v", u, err)
	}
	return c.now()
}

// Guards sharing a Pacer share each host's schedule: their requests
// together are spaced by the interval, as one Guard's would be.
func TestSharedPacerSpacesAllGuards(t *testing.T) {
	c := newFakeClock()
	gs, _ := sharedGuards(c, 3, 4)
	var at []time.Time
	for i := 0; i < 12; i++ {
		at = append(at, gateOnce(t, gs[i%3], c, "http://example.com/p"))
	}
	if gap := minGap(at); gap != 250*time.Millisecond {
		t.Errorf("shared spacing over 3 Guards at 4/s = %v, want 250ms", gap)
	}
	// Another host has its own schedule: its first request goes at once.
	before := c.now()
	if got := gateOnce(t, gs[1], c, "http://other.example/"); !got.Equal(before) {
		t.Errorf("first request to another host waited %v", got.Sub(before))
	}
}

// A Retry-After one Guard receives pauses the host for every Guard, and
// wakes requests already waiting for a slot.
func TestSharedStrikePausesEveryGuard(t *testing.T) {
	c := newFakeClock()
	gs, _ := sharedGuards(c, 2, rate.Inf)
	u := mustURL(t, "http://example.com/")
	gateOnce(t, gs[1], c, u.String()) // gs[1] knows the host
	h0 := gs[0].host(u)
	start := c.now()
	gs[0].strike(h0, start, hard, http.Header{"Retry-After": {"30"}})

	h1 := gs[1].hosts.lookup("example.com")
	h1.mu.Lock()
	pu := h1.pauseUntil
	h1.mu.Unlock()
	if want := start.Add(30 * time.Second).UnixNano(); pu != want {
		t.Errorf("other Guard's pause after Watch = %v, want %v", time.Unix(0, pu), time.Unix(0, want))
	}
	if got := gateOnce(t, gs[1], c, u.String()); got.Sub(start) < 30*time.Second {
		t.Errorf("other Guard sent %v after a Retry-After: 30", got.Sub(start))
	}
	// A Guard that had never seen the host learns the pause from Reserve.
	g3 := fakeGuard(&Guard{Rate: rate.Inf, Pacer: gs[0].Pacer}, c, 0)
	gs[0].strike(h0, c.now(), hard, http.Header{"Retry-After": {"60"}})
	mid := c.now()
	if got := gateOnce(t, g3, c, u.String()); got.Sub(mid) < 60*time.Second {
		t.Errorf("new Guard sent %v after a Retry-After: 60", got.Sub(mid))
	}
}

// Several Guards seeing the same incident cut the rate once, not once
// each; a later incident cuts again.
func TestSharedCutOncePerIncident(t *testing.T) {
	c := newFakeClock()
	gs, p := sharedGuards(c, 3, 1)
	u := mustURL(t, "http://example.com/")
	now := c.now()
	for _, g := range gs {
		g.strike(g.host(u), now, hard, http.Header{"Retry-After": {"5"}})
	}
	pc, _ := p.Recover(context.Background(), "example.com", time.Hour, time.Second) // reads
	if pc.Interval != 2*time.Second {
		t.Errorf("interval after one incident seen by 3 Guards = %v, want 2s", pc.Interval)
	}
	for _, g := range gs {
		if got := hostStats(g, "example.com").Interval; got != 2*time.Second {
			t.Errorf("Guard's interval = %v, want 2s", got)
		}
	}
	c.advance(10 * time.Second)
	gs[1].strike(gs[1].host(u), c.now(), hard, http.Header{"Retry-After": {"5"}})
	if got := hostStats(gs[2], "example.com").Interval; got != 4*time.Second {
		t.Errorf("interval after a second incident = %v, want 4s", got)
	}
}

// A cut host recovers through the Pacer: healthy responses on one Guard
// speed every Guard up, down to the floor.
func TestSharedRecovery(t *testing.T) {
	c := newFakeClock()
	gs, _ := sharedGuards(c, 2, 1)
	u := mustURL(t, "http://example.com/")
	h0 := gs[0].host(u)
	gs[0].strike(h0, c.now(), hard, http.Header{"Retry-After": {"1"}})
	gateOnce(t, gs[1], c, u.String())
	if got := hostStats(gs[1], "example.com").Interval; got != 2*time.Second {
		t.Fatalf("interval after a cut = %v, want 2s", got)
	}
	ok := &http.Response{StatusCode: 200}
	for i := 0; i < 200 && hostStats(gs[1], "example.com").Interval > time.Second; i++ {
		gateOnce(t, gs[0], c, u.String())
		gs[0].judge(h0, ok)
		gateOnce(t, gs[1], c, u.String()) // learns the interval from Reserve
	}
	if got := hostStats(gs[1], "example.com").Interval; got != time.Second {
		t.Errorf("interval after recovery = %v, want the 1s floor", got)
	}
}

// A failingPacer cannot be reached.
type failingPacer struct{ pace.Memory }

var errDown = errors.New("connection refused")

func (*failingPacer) Reserve(context.Context, string, pace.Ask) (pace.Slot, error) {
	return pace.Slot{}, errDown
}

// While the Pacer is down, requests are deferred, not sent and not lost,
// with a cause naming it, and the deferral grows with the outage: a
// request that comes back at its deferral's end and fails again waits as
// long as the outage has lasted, from 1 s to 30 s; requests that meet the
// outage together wait alike, however many.
func TestPacerDownDefers(t *testing.T) {
	c := newFakeClock()
	g := fakeGuard(&Guard{Pacer: &failingPacer{}}, c, 0)
	u := mustURL(t, "http://example.com/")
	h := g.host(u)
	defer1 := func() time.Duration {
		err := g.gateEnded(context.Background(), h, u, time.Hour)
		var de *DeferredError
		if !errors.As(err, &de) || !errors.Is(err, pace.ErrUnavailable) || !errors.Is(err, errDown) || IsFinal(err) {
			t.Fatalf("gate with the pace.Pacer down = %v, want a deferral wrapping pace.ErrUnavailable and the cause", err)
		}
		return de.Until.Sub(c.now())
	}
	var together []time.Duration
	for i := 0; i < 5; i++ {
		together = append(together, defer1())
	}
	if want := []time.Duration{time.Second, time.Second, time.Second, time.Second, time.Second}; fmt.Sprint(together) != fmt.Sprint(want) {
		t.Errorf("deferrals of requests that met the outage together = %v, want %v", together, want)
	}
	var until []time.Duration
	for i := 0; i < 7; i++ {
		d := defer1()
		until = append(until, d)
		c.advance(d) // the request comes back
	}
	if want := []time.Duration{time.Second, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second}; fmt.Sprint(until) != fmt.Sprint(want) {
		t.Errorf("deferrals of a request that comes back while the pace.Pacer is down = %v, want %v", until, want)
	}
	if got := hostStats(g, "example.com").Sent; got != 0 {
		t.Errorf("Sent = %d with the pace.Pacer down, want 0", got)
	}
}

// Two collectors with Guards of their own, sharing a pace.Memory, crawl
// one site: every request of both passes the gate at least the interval
// after the one before, robots.txt included.
func TestSharedPacerCollectors(t *testing.T) {
	s := newSite(t, robots("", nil))
	p := &pace.Memory{}
	var mu sync.Mutex
	var at []time.Time
	var gs []*Guard
	for i := 0; i < 2; i++ {
		g := &Guard{Rate: 20, Pacer: p}
		g.onPass = func(_ string, t time.Time) {
			mu.Lock()
			at = append(at, t)
			mu.Unlock()
		}
		gs = append(gs, g)
	}
	var wg sync.WaitGroup
	for i, g := range gs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := colly.NewCollector(g.Attach, colly.Async())
			c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4})
			for j := 0; j < 10; j++ {
				c.Visit(fmt.Sprintf("%s/g%d/p%d", s.URL, i, j))
			}
			c.Wait()
		}()
	}
	wg.Wait()
	if n := len(s.log()); n != 22 {
		t.Errorf("server saw %d requests, want 22 (2 robots.txt, 20 pages)", n)
	}
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	if gap := minGap(at); gap < 50*time.Millisecond-slack {
		t.Errorf("smallest gap between the two Guards' sends = %v, want ≥ 50ms", gap)
	}
}

// Requests deferred by a shared schedule keep the slots they were given,
// so they come back one by one, each to its own slot, and go without
// asking again; a pause learned meanwhile voids the slot.
func TestSharedDeferralsKeepTheirSlots(t *testing.T) {
	c := newFakeClock()
	gs, _ := sharedGuards(c, 2, 1)
	u := mustURL(t, "http://example.com/")
	var until []time.Duration
	start := c.now()
	for i := 0; i < 4; i++ {
		g := gs[i%2]
		l, _, err := g.schedule(context.Background(), g.host(u), u, 0, false, true, time.Time{})
		if l != 0 {
			g.release(g.host(u), l, 0, false, false, time.Time{}, false) // its response ended
		}
		var de *DeferredError
		switch {
		case i == 0 && err != nil:
			t.Fatalf("first request: %v", err)
		case i == 0:
			continue
		case !errors.As(err, &de) || !de.reserved:
			t.Fatalf("request %d: %v, want a deferral holding its slot", i, err)
		}
		until = append(until, de.Until.Sub(start))
	}
	if want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}; fmt.Sprint(until) != fmt.Sprint(want) {
		t.Errorf("deferred to %v, want each to its own slot %v", until, want)
	}
	// Back at its slot, a request goes at once, without a new slot.
	c.advance(time.Second)
	h := gs[1].host(u)
	if _, _, err := gs[1].schedule(context.Background(), h, u, 0, true, true, time.Time{}); err != nil {
		t.Errorf("request back at its slot: %v", err)
	}
	// A pause learned since voids the slot: the request waits for it.
	gs[0].strike(gs[0].host(u), c.now(), hard, http.Header{"Retry-After": {"10"}})
	_, _, err := gs[1].schedule(context.Background(), h, u, 0, true, true, time.Time{})
	var de *DeferredError
	if !errors.As(err, &de) || de.Until.Sub(c.now()) != 10*time.Second {
		t.Errorf("request with a slot from before a 10s pause: %v, want deferred to the pause's end (to a new position there)", err)
	}
}
