// Package pacertest is the contract test of robotsmw.Pacer: one table of
// the schedule's rules (positions, in-flight leases, the gap after the end
// of a response, latency, pauses, cuts and recovery), run against every
// home of the schedule — robotsmw.MemoryPacer and redisstore's Pacer — so
// that the two cannot drift apart.
package pacertest

import (
	"context"
	"testing"
	"time"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// A Home is one home of the schedule under test.
type Home struct {
	// Pacer is the Pacer under test, with no state for the hosts used.
	Pacer robotsmw.Pacer
	// Advance moves the Pacer's clock on by d (sleeps, for a real clock).
	Advance func(d time.Duration)
	// Tol is how much less than expected a wait may be: the time a real
	// clock moves on between calls; 0 for a manual clock.
	Tol time.Duration
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

func (c *checker) reserve(call string, a robotsmw.Ask) robotsmw.Slot {
	c.t.Helper()
	if a.Limit == 0 {
		a.Limit = time.Hour
	}
	s, err := c.h.Pacer.Reserve(c.ctx, "example.com", a)
	if err != nil {
		c.t.Fatalf("%s: Reserve: %v", call, err)
	}
	return s
}

func (c *checker) release(call string, r robotsmw.Release) robotsmw.Pace {
	c.t.Helper()
	pc, err := c.h.Pacer.Release(c.ctx, "example.com", r)
	if err != nil {
		c.t.Fatalf("%s: Release: %v", call, err)
	}
	return pc
}

// near reports whether got is want, or within Tol below it.
func (c *checker) near(got, want time.Duration) bool {
	return got <= want && got >= want-c.h.Tol
}

// lease checks that s granted a lease now.
func (c *checker) lease(call string, s robotsmw.Slot) uint64 {
	c.t.Helper()
	if !s.Reserved || s.Lease == 0 || s.Wait != 0 {
		c.t.Fatalf("%s = %+v, want a lease now", call, s)
	}
	return s.Lease
}

// waits checks that s grants no lease and says to ask again in want.
func (c *checker) waits(call string, s robotsmw.Slot, reserved bool, want time.Duration) {
	c.t.Helper()
	if s.Lease != 0 || s.Reserved != reserved || !c.near(s.Wait, want) {
		c.t.Errorf("%s = %+v, want no lease, reserved %v, wait %v", call, s, reserved, want)
	}
}

var cases = []struct {
	name string
	run  func(t *testing.T, c *checker)
}{
	{"positions are an interval apart, burst 1", func(t *testing.T, c *checker) {
		a := robotsmw.Ask{Floor: 100 * ms, NoLease: true}
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
		l := c.lease("first Reserve", c.reserve("first", robotsmw.Ask{}))
		s := c.reserve("second", robotsmw.Ask{})
		if s.Lease != 0 || !s.Reserved || s.InFlight != 1 {
			t.Fatalf("second Reserve while one is in flight = %+v, want a position and no lease (busy)", s)
		}
		c.waits("again, positioned", c.reserve("again", robotsmw.Ask{Positioned: true}), true, 250*ms)
		c.release("Release", robotsmw.Release{Lease: l, Latency: 20 * ms})
		c.lease("Reserve after the end", c.reserve("after", robotsmw.Ask{Positioned: true}))
	}},
	{"InFlight 2 allows two leases, not three", func(t *testing.T, c *checker) {
		a := robotsmw.Ask{InFlight: 2}
		c.lease("first", c.reserve("first", a))
		c.lease("second", c.reserve("second", a))
		if s := c.reserve("third", a); s.Lease != 0 || s.InFlight != 2 {
			t.Errorf("third Reserve with InFlight 2 = %+v, want no lease", s)
		}
	}},
	{"the gap counts from the end of the response", func(t *testing.T, c *checker) {
		a := robotsmw.Ask{Floor: 100 * ms, Gap: 100 * ms}
		l := c.lease("first", c.reserve("first", a))
		c.h.Advance(80 * ms) // the response takes 80ms
		c.release("Release", robotsmw.Release{Lease: l, Latency: 80 * ms, Floor: 100 * ms})
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
		a := robotsmw.Ask{Floor: 100 * ms, NoLease: true}
		for i := 0; i < 3; i++ {
			c.reserve("Reserve", a)
		}
		c.h.Advance(400 * ms)
		b := robotsmw.Ask{Floor: 100 * ms, Positioned: true}
		l := c.lease("first late lease", c.reserve("late", b))
		c.release("Release", robotsmw.Release{Lease: l, Latency: ms, Floor: 100 * ms})
		c.waits("second late lease", c.reserve("late", b), true, 100*ms)
	}},
	{"a lease never given back runs out", func(t *testing.T, c *checker) {
		c.lease("first", c.reserve("first", robotsmw.Ask{Lease: 100 * ms}))
		if s := c.reserve("second", robotsmw.Ask{Positioned: true}); s.Lease != 0 {
			t.Fatalf("Reserve while the lease holds = %+v, want no lease", s)
		}
		c.h.Advance(110 * ms)
		c.lease("Reserve after the lease ran out", c.reserve("after", robotsmw.Ask{Positioned: true}))
	}},
	{"latency: slower responses widen the gap, failures never narrow it", func(t *testing.T, c *checker) {
		a := robotsmw.Ask{Latency: 1}
		l := c.lease("first", c.reserve("first", a))
		pc := c.release("Release", robotsmw.Release{Lease: l, Latency: 200 * ms})
		if pc.Latency != 200*ms {
			t.Errorf("Latency after one 200ms response = %v, want 200ms", pc.Latency)
		}
		a.Positioned = true
		c.waits("Reserve after a 200ms response", c.reserve("after", a), true, 200*ms)
		c.h.Advance(200 * ms)
		l = c.lease("second", c.reserve("second", a))
		if pc := c.release("failed", robotsmw.Release{Lease: l, Latency: 40 * ms, Failed: true}); pc.Latency != 200*ms {
			t.Errorf("Latency after a fast failure = %v, want 200ms kept", pc.Latency)
		}
		c.h.Advance(200 * ms)
		l = c.lease("third", c.reserve("third", a))
		if pc := c.release("fast", robotsmw.Release{Lease: l, Latency: 40 * ms}); pc.Latency != 160*ms {
			t.Errorf("Latency after a fast response = %v, want 160ms (a quarter of the way down)", pc.Latency)
		}
		c.h.Advance(160 * ms)
		l = c.lease("fourth", c.reserve("fourth", a))
		if pc := c.release("slow", robotsmw.Release{Lease: l, Latency: 360 * ms}); pc.Latency != 360*ms {
			t.Errorf("Latency after a slow response = %v, want 360ms (at once)", pc.Latency)
		}
		// Without Latency the gap is the Crawl-delay's alone.
		c.lease("Reserve without Latency", c.reserve("fixed", robotsmw.Ask{Positioned: true}))
	}},
	{"an unsent release ends nothing", func(t *testing.T, c *checker) {
		a := robotsmw.Ask{Gap: time.Hour}
		l := c.lease("first", c.reserve("first", a))
		c.release("Release unsent", robotsmw.Release{Lease: l, Unsent: true})
		a.Positioned = true
		c.lease("Reserve after an unsent release", c.reserve("after", a))
	}},
	{"a strike pauses, voids positions and cuts once", func(t *testing.T, c *checker) {
		a := robotsmw.Ask{Floor: 100 * ms, NoLease: true}
		for i := 0; i < 5; i++ {
			c.reserve("Reserve", a) // positions up to 400ms ahead
		}
		st := robotsmw.Strike{Pause: 200 * ms, Factor: 2, Floor: 100 * ms, Ceiling: time.Minute, From: 100 * ms}
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
		if s := c.reserve("lease in the pause", robotsmw.Ask{Positioned: true}); s.Lease != 0 || s.Reserved {
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
}
