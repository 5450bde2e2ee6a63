// Package pacertest is the contract test of pace.Pacer: one table of
// the schedule's rules (positions, in-flight leases, the gap after the end
// of a response, latency, pauses, cuts, recovery and eviction), run
// against every home of the schedule — pace.Memory, pace.Local and redisstore's Pacer — so
// that they cannot drift apart.
package pacertest

import (
	"context"
	"fmt"
	"github.com/robotsmw/robotsmw/pace"
	"testing"
	"time"
)

// A Home is one home of the schedule under test.
type Home struct {
	// Pacer is the Pacer under test, with no state for the hosts used.
	Pacer pace.Pacer
	// Advance moves the Pacer's clock on by d (sleeps, for a real clock).
	Advance func(d time.Duration)
	// Tol is how much less than expected a wait may be: the time a real
	// clock moves on between calls; 0 for a manual clock.
	Tol time.Duration
	// Idle is how long the home keeps a host that holds nothing, as it
	// documents it (pace.Memory.Idle, redisstore's Fleet.PacerIdle). The
	// contract: a host is kept while it holds anything — a lease, a pause,
	// a cut interval, a position ahead — and for Idle after its last
	// response ended; once it holds nothing, it is forgotten (its smoothed
	// response time unknown again) by twice Idle later, at the latest on
	// the Pacer's next call for any host. A real clock's Idle must be a
	// few times Tol.
	Idle time.Duration
	// Hosts returns how many hosts' states the home holds now.
	Hosts func() int
}

// ms is a short unit that a real clock can keep to within Tol.
const ms = time.Millisecond

// Run runs the contract's cases, each on a new Home from home.
func Run(t *testing.T, home func(t *testing.T) Home) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.run(t, &checker{t: t, h: home(t), ctx: context.Background()})
		})
	}
}

// A checker runs one case's calls and checks their answers.
type checker struct {
	t   *testing.T
	h   Home
	ctx context.Context
}

func (c *checker) reserve(call string, a pace.Ask) pace.Slot {
	c.t.Helper()
	return c.reserveOn("example.com", call, a)
}

func (c *checker) reserveOn(host, call string, a pace.Ask) pace.Slot {
	c.t.Helper()
	if a.Limit == 0 {
		a.Limit = time.Hour
	}
	s, err := c.h.Pacer.Reserve(c.ctx, host, a)
	if err != nil {
		c.t.Fatalf("%s: Reserve(%s): %v", call, host, err)
	}
	return s
}

func (c *checker) release(call string, r pace.Release) pace.State {
	c.t.Helper()
	return c.releaseOn("example.com", call, r)
}

func (c *checker) releaseOn(host, call string, r pace.Release) pace.State {
	c.t.Helper()
	pc, err := c.h.Pacer.Release(c.ctx, host, r)
	if err != nil {
		c.t.Fatalf("%s: Release(%s): %v", call, host, err)
	}
	return pc
}

// evictable skips an eviction case for a home that cannot be observed.
func (c *checker) evictable() {
	c.t.Helper()
	if c.h.Idle <= 0 || c.h.Hosts == nil {
		c.t.Skip("the home has no Idle or Hosts")
	}
}

// kept makes a call of the Pacer for another host (which must run a sweep
// due), then checks that the home holds want hosts besides that one.
func (c *checker) kept(call string, want int) {
	c.t.Helper()
	c.reserveOn("sweep.example", call, pace.Ask{NoLease: true})
	if got := c.h.Hosts() - 1; got != want {
		c.t.Errorf("%s: Hosts = %d besides the sweeping call's, want %d", call, got, want)
	}
}

// past is how long after a host went idle it must have been forgotten:
// twice Idle, and a margin.
func (c *checker) past() time.Duration { return 2*c.h.Idle + c.h.Idle/4 }

// holds checks that a host holding something for 3×Idle from now (hold
// takes it) is kept past the horizon of an idle host, and forgotten once
// the hold has ended (end, if not nil, ends it at 3×Idle).
func (c *checker) holds(hold func(host string), end func(host string)) {
	c.t.Helper()
	c.evictable()
	hold("example.com")
	c.h.Advance(c.past())
	c.kept("a call past the idle horizon while the host holds something", 1)
	c.h.Advance(3*c.h.Idle - c.past())
	if end != nil {
		end("example.com")
	}
	c.h.Advance(c.past())
	c.kept("a call past the idle horizon after the hold", 0)
	if s := c.reserve("Reserve of the forgotten host", pace.Ask{}); s.Lease == 0 || s.Interval != 0 || s.Latency != 0 {
		c.t.Errorf("Reserve of a forgotten host = %+v, want a lease now with nothing known", s)
	}
}

// near reports whether got is want, or within Tol below it.
func (c *checker) near(got, want time.Duration) bool {
	return got <= want && got >= want-c.h.Tol
}

// lease checks that s granted a lease now.
func (c *checker) lease(call string, s pace.Slot) uint64 {
	c.t.Helper()
	if !s.Reserved || s.Lease == 0 || s.Wait != 0 {
		c.t.Fatalf("%s = %+v, want a lease now", call, s)
	}
	return s.Lease
}

// waits checks that s grants no lease and says to ask again in want.
func (c *checker) waits(call string, s pace.Slot, reserved bool, want time.Duration) {
	c.t.Helper()
	if s.Lease != 0 || s.Reserved != reserved || !c.near(s.Wait, want) {
		c.t.Errorf("%s = %+v, want no lease, reserved %v, wait %v", call, s, reserved, want)
	}
}

// manyHosts is how many hosts the eviction case touches.
const manyHosts = 1000

var cases = []struct {
	name string
	run  func(t *testing.T, c *checker)
}{
	{"positions are an interval apart, burst 1", func(t *testing.T, c *checker) {
		a := pace.Ask{Floor: 100 * ms, NoLease: true}
		for i := 0; i < 3; i++ {
			s := c.reserve("Reserve", a)
			if !s.Reserved || !c.near(s.Wait, time.Duration(i)*100*ms) {
				t.Errorf("position %d = %+v, want reserved in %v", i, s, time.Duration(i)*100*ms)
			}
		}
		a.Limit = 250 * ms
		c.waits("Reserve beyond Limit", c.reserve("Reserve", a), false, 300*ms)
	}},
	{"one lease in flight by default; the end frees the host", func(t *testing.T, c *checker) {
		l := c.lease("first Reserve", c.reserve("first", pace.Ask{}))
		s := c.reserve("second", pace.Ask{})
		if s.Lease != 0 || !s.Reserved || s.InFlight != 1 {
			t.Fatalf("second Reserve while one is in flight = %+v, want a position and no lease (busy)", s)
		}
		c.waits("again, positioned", c.reserve("again", pace.Ask{Positioned: true}), true, 250*ms)
		c.release("Release", pace.Release{Lease: l, Latency: 20 * ms})
		c.lease("Reserve after the end", c.reserve("after", pace.Ask{Positioned: true}))
	}},
	{"InFlight 2 allows two leases, not three", func(t *testing.T, c *checker) {
		a := pace.Ask{InFlight: 2}
		c.lease("first", c.reserve("first", a))
		c.lease("second", c.reserve("second", a))
		if s := c.reserve("third", a); s.Lease != 0 || s.InFlight != 2 {
			t.Errorf("third Reserve with InFlight 2 = %+v, want no lease", s)
		}
	}},
	{"the gap counts from the end of the response", func(t *testing.T, c *checker) {
		a := pace.Ask{Floor: 100 * ms, Gap: 100 * ms}
		l := c.lease("first", c.reserve("first", a))
		c.h.Advance(80 * ms) // the response takes 80ms
		c.release("Release", pace.Release{Lease: l, Latency: 80 * ms, Floor: 100 * ms})
		// Its start was 100ms ago soon, but it ended just now: 100ms more.
		a.Positioned = true
		c.waits("Reserve right after the end", c.reserve("after", a), true, 100*ms)
		c.h.Advance(100 * ms)
		c.lease("Reserve a gap after the end", c.reserve("later", a))
	}},
	{"a position used late is checked again: no burst", func(t *testing.T, c *checker) {
		// A member takes three positions, then stalls (GC, SIGSTOP) past
		// all of them: waking, it gets its leases an interval apart, not
		// at once.
		a := pace.Ask{Floor: 100 * ms, NoLease: true}
		for i := 0; i < 3; i++ {
			c.reserve("Reserve", a)
		}
		c.h.Advance(400 * ms)
		b := pace.Ask{Floor: 100 * ms, Positioned: true}
		l := c.lease("first late lease", c.reserve("late", b))
		c.release("Release", pace.Release{Lease: l, Latency: ms, Floor: 100 * ms})
		c.waits("second late lease", c.reserve("late", b), true, 100*ms)
	}},
	{"a lease never given back runs out", func(t *testing.T, c *checker) {
		if s := c.reserve("first", pace.Ask{Lease: 100 * ms}); c.lease("first", s) != 0 && s.LeaseTTL != 100*ms {
			t.Errorf("Reserve with Ask.Lease 100ms: LeaseTTL = %v, want 100ms (how long the lease lasts)", s.LeaseTTL)
		}
		if s := c.reserve("second", pace.Ask{Positioned: true}); s.Lease != 0 {
			t.Fatalf("Reserve while the lease holds = %+v, want no lease", s)
		}
		c.h.Advance(110 * ms)
		c.lease("Reserve after the lease ran out", c.reserve("after", pace.Ask{Positioned: true}))
	}},
	{"latency: slower responses widen the gap, failures never narrow it", func(t *testing.T, c *checker) {
		a := pace.Ask{Latency: 1}
		l := c.lease("first", c.reserve("first", a))
		pc := c.release("Release", pace.Release{Lease: l, Latency: 200 * ms})
		if pc.Latency != 200*ms {
			t.Errorf("Latency after one 200ms response = %v, want 200ms", pc.Latency)
		}
		a.Positioned = true
		c.waits("Reserve after a 200ms response", c.reserve("after", a), true, 200*ms)
		c.h.Advance(200 * ms)
		l = c.lease("second", c.reserve("second", a))
		if pc := c.release("failed", pace.Release{Lease: l, Latency: 40 * ms, Failed: true}); pc.Latency != 200*ms {
			t.Errorf("Latency after a fast failure = %v, want 200ms kept", pc.Latency)
		}
		c.h.Advance(200 * ms)
		l = c.lease("third", c.reserve("third", a))
		if pc := c.release("fast", pace.Release{Lease: l, Latency: 40 * ms}); pc.Latency != 160*ms {
			t.Errorf("Latency after a fast response = %v, want 160ms (a quarter of the way down)", pc.Latency)
		}
		c.h.Advance(160 * ms)
		l = c.lease("fourth", c.reserve("fourth", a))
		if pc := c.release("slow", pace.Release{Lease: l, Latency: 360 * ms}); pc.Latency != 360*ms {
			t.Errorf("Latency after a slow response = %v, want 360ms (at once)", pc.Latency)
		}
		// Without Latency the gap is the Crawl-delay's alone.
		c.lease("Reserve without Latency", c.reserve("fixed", pace.Ask{Positioned: true}))
	}},
	{"an unsent release ends nothing", func(t *testing.T, c *checker) {
		a := pace.Ask{Gap: time.Hour}
		l := c.lease("first", c.reserve("first", a))
		c.release("Release unsent", pace.Release{Lease: l, Unsent: true})
		a.Positioned = true
		c.lease("Reserve after an unsent release", c.reserve("after", a))
	}},
	{"a strike pauses, voids positions and cuts once", func(t *testing.T, c *checker) {
		a := pace.Ask{Floor: 100 * ms, NoLease: true}
		for i := 0; i < 5; i++ {
			c.reserve("Reserve", a) // positions up to 400ms ahead
		}
		st := pace.Strike{Pause: 200 * ms, Factor: 2, Floor: 100 * ms, Ceiling: time.Minute, From: 100 * ms}
		pc, err := c.h.Pacer.Strike(c.ctx, "example.com", st)
		if err != nil || pc.Interval != 200*ms || !c.near(pc.Paused, 200*ms) {
			t.Fatalf("Strike = %+v, %v; want interval 200ms, paused 200ms", pc, err)
		}
		if pc, _ := c.h.Pacer.Strike(c.ctx, "example.com", st); pc.Interval != 200*ms {
			t.Errorf("second Strike of the incident = %+v, want the interval cut once", pc)
		}
		s := c.reserve("Reserve after the strike", a)
		if !s.Reserved || !c.near(s.Wait, 200*ms) {
			t.Errorf("Reserve after the strike = %+v, want the position at the pause's end", s)
		}
		if s := c.reserve("lease in the pause", pace.Ask{Positioned: true}); s.Lease != 0 || s.Reserved {
			t.Errorf("positioned Reserve in the pause = %+v, want the position voided", s)
		}
		if pc, _ := c.h.Pacer.Recover(c.ctx, "example.com", 100*ms, 100*ms); pc.Interval != 200*ms {
			t.Errorf("Recover while paused = %+v, want the cut kept", pc)
		}
		c.h.Advance(250 * ms)
		if pc, _ := c.h.Pacer.Recover(c.ctx, "example.com", 100*ms, 100*ms); pc.Interval != 100*ms {
			t.Errorf("Recover after the pause = %+v, want the 100ms floor", pc)
		}
	}},
	{"eviction: an idle host is forgotten, its latency unknown again", func(t *testing.T, c *checker) {
		c.evictable()
		l := c.lease("first", c.reserve("first", pace.Ask{}))
		c.release("Release", pace.Release{Lease: l, Latency: 20 * ms})
		if n := c.h.Hosts(); n != 1 {
			t.Errorf("Hosts after one request = %d, want 1", n)
		}
		c.h.Advance(c.h.Idle / 2)
		if s := c.reserve("Reserve within Idle", pace.Ask{NoLease: true}); s.Latency != 20*ms {
			t.Errorf("Reserve within Idle of the last response = %+v, want latency 20ms kept", s)
		}
		c.h.Advance(c.past())
		c.kept("a call past the idle horizon", 0)
		if s := c.reserve("Reserve of the forgotten host", pace.Ask{Latency: 1}); s.Lease == 0 || s.Latency != 0 {
			t.Errorf("Reserve of a forgotten host = %+v, want a lease now and latency 0 (unknown)", s)
		}
	}},
	{"eviction: a held lease keeps the host until it runs out", func(t *testing.T, c *checker) {
		c.holds(func(h string) {
			c.lease("Reserve", c.reserveOn(h, "Reserve", pace.Ask{Lease: 3 * c.h.Idle}))
		}, nil)
	}},
	{"eviction: a pause keeps the host until it ends", func(t *testing.T, c *checker) {
		c.holds(func(h string) {
			if _, err := c.h.Pacer.Strike(c.ctx, h, pace.Strike{Pause: 3 * c.h.Idle, Factor: 1}); err != nil {
				t.Fatalf("Strike: %v", err)
			}
		}, nil)
	}},
	{"eviction: a position ahead keeps the host until it has come", func(t *testing.T, c *checker) {
		c.holds(func(h string) {
			a := pace.Ask{Floor: 3 * c.h.Idle / 2, NoLease: true}
			c.reserveOn(h, "first position", a)
			if s := c.reserveOn(h, "second position", a); !s.Reserved || s.Wait <= 0 {
				t.Fatalf("second position = %+v, want one ahead", s)
			}
		}, nil)
	}},
	{"eviction: a cut keeps the host until it recovers", func(t *testing.T, c *checker) {
		st := pace.Strike{Factor: 2, Floor: 100 * ms, Ceiling: time.Minute}
		c.holds(func(h string) {
			if pc, err := c.h.Pacer.Strike(c.ctx, h, st); err != nil || pc.Interval != 200*ms {
				t.Fatalf("Strike = %+v, %v; want the interval cut to 200ms", pc, err)
			}
		}, func(h string) {
			if pc, err := c.h.Pacer.Recover(c.ctx, h, 100*ms, 100*ms); err != nil || pc.Interval != 100*ms {
				t.Fatalf("Recover = %+v, %v; want the 100ms floor", pc, err)
			}
		})
	}},
	{"eviction: many hosts touched once all go: memory is bounded", func(t *testing.T, c *checker) {
		c.evictable()
		leases := make([]uint64, manyHosts)
		for i := range leases {
			h := fmt.Sprintf("h%d.example", i)
			leases[i] = c.lease("Reserve "+h, c.reserveOn(h, "Reserve", pace.Ask{Lease: time.Minute}))
		}
		if n := c.h.Hosts(); n != manyHosts {
			t.Errorf("Hosts with %d leases held = %d", manyHosts, n)
		}
		for i, l := range leases {
			c.releaseOn(fmt.Sprintf("h%d.example", i), "Release", pace.Release{Lease: l, Latency: ms})
		}
		c.h.Advance(c.past())
		c.kept(fmt.Sprintf("a call past the idle horizon of %d hosts", manyHosts), 0)
	}},
}
