package robotsmw

import (
	"context"
	"fmt"
	"net/url"
	"sync/atomic"
	"time"
)

// A Pacer keeps the per-host schedule, pauses and rate cuts that several
// Guards share, so that a fleet of crawler processes behaves as one polite
// crawler: one schedule per host for all of them, and a pause that one of
// them is asked for (Retry-After, back-off) holds for every one. With
// Guard.Pacer nil, a Guard keeps this state in its own memory, the
// default. [MemoryPacer] shares it among the Guards of one process;
// package redisstore shares it over Redis.
//
// Only durations cross the interface: a Pacer measures time on its own
// clock (Redis's TIME, say) and the Guard sleeps the durations it is
// given, so the clocks of the fleet's machines need not agree.
//
// The Guard calls Reserve once per request, at the request's gate right
// before it is sent; Strike after each 429, 503, 500, 502, 504 or network
// failure; and Recover when a host whose rate was cut has answered well
// long enough to speed up one step. It keeps a copy of what the Pacer
// last told it about each host, so a host known to be paused costs no
// call. A Pacer must be safe for concurrent use by multiple goroutines.
type Pacer interface {
	// Reserve takes the next free slot of host's schedule for one request,
	// if that slot comes within limit from now, and returns how long to
	// wait for it. Slots are at least the host's interval apart (floor, or
	// a cut above it) and never fall in a pause. A slot further away than
	// limit is not taken: Slot.Reserved is false and Slot.Wait says when
	// asking again makes sense. Burst 1: a host first seen, or idle,
	// gets its slot now.
	Reserve(ctx context.Context, host string, floor, limit time.Duration) (Slot, error)

	// Strike records a failure seen by one member: the host is paused for
	// s.Pause from now, merged with any pause in force by taking the later
	// end, and its schedule is voided (no slot falls before the pause's
	// end). A failure that comes while the host is not paused starts an
	// incident, and cuts the rate once per incident: the interval is
	// multiplied by s.Factor if the last cut is at least one interval old,
	// however many members report the same incident.
	Strike(ctx context.Context, host string, s Strike) (Pace, error)

	// Recover lowers the host's interval to interval, never below floor
	// nor above its current value: one step of a cut host's recovery. It
	// does nothing while the host is paused or within one interval of its
	// last cut, so a step computed before another member's cut cannot
	// undo it.
	Recover(ctx context.Context, host string, interval, floor time.Duration) (Pace, error)

	// Watch calls fn whenever a member's Strike changes a host's pause or
	// interval, so that requests already waiting for a slot learn of it at
	// once. fn may be called concurrently and must not block. stop ends
	// the calls.
	Watch(fn func(host string, p Pace)) (stop func())
}

// A Strike is what a failure asks of a host's shared state (see
// Pacer.Strike).
type Strike struct {
	// Pause is how long the host is paused from now: the Retry-After, or
	// the back-off step.
	Pause time.Duration
	// Factor multiplies the interval when the failure starts an incident:
	// 2 after a 429 or 503, 1.25 after a 500, 502, 504 or network error.
	Factor float64
	// Floor is the slowest of the Guard's Rate and the host's
	// Crawl-delays; Ceiling is where cuts stop, unless Floor is slower.
	Floor, Ceiling time.Duration
	// From is the interval a cut starts from when the host has none (it is
	// paced by nothing but back-off).
	From time.Duration
}

// A Pace is a host's shared state as a Pacer reports it.
type Pace struct {
	// Interval is the spacing in force: the floor, or a cut above it.
	Interval time.Duration
	// Paused is how much longer the host is paused; 0 if it is not.
	Paused time.Duration
}

// A Slot is the answer of Pacer.Reserve.
type Slot struct {
	// Reserved reports whether the slot was taken.
	Reserved bool
	// Wait is how long from now until the slot; when the slot was not
	// taken, until the first slot that could be.
	Wait time.Duration
	Pace
}

// Retries of an unreachable Pacer (politeness.md §3.6 point 7: pause
// rather than run every member at full speed).
const (
	pacerRetryMin = time.Second
	pacerRetryMax = 30 * time.Second
)

// ErrPacerUnavailable is wrapped by the cause of a deferral while the
// Guard's Pacer cannot be reached: the request is sent again once it can.
var ErrPacerUnavailable = fmt.Errorf("robotsmw: pacer unavailable")

// A pacerState is what a Guard keeps about its Pacer.
type pacerState struct {
	watchOnce atomic.Bool
	// failures counts the failed Pacer calls in a row; it sets how long
	// requests are put off while the Pacer is down.
	failures atomic.Int32
}

// watch registers the Guard with its Pacer, once.
func (g *Guard) watch(p Pacer) {
	if g.pacer.watchOnce.Load() || !g.pacer.watchOnce.CompareAndSwap(false, true) {
		return
	}
	p.Watch(func(name string, pc Pace) {
		if h := g.hosts.lookup(name); h != nil {
			h.mu.Lock()
			h.apply(g.clock().UnixNano(), pc, g.rateFloor())
			h.mu.Unlock()
		}
	})
}

// apply merges what the Pacer said of the host at now into its local
// copy: the pause's later end, and the interval. A pause that ends later
// than the one known voids the local waits, which take new slots. h.mu
// must be held.
func (h *host) apply(now int64, p Pace, rateFloor time.Duration) {
	if p.Paused > 0 {
		if end := addNanos(now, p.Paused); end > h.pauseUntil {
			h.pauseUntil = end
			if p.Paused > maxRetryAfter {
				h.troubled(rateFloor).excluded = true
			}
			h.wake()
		}
	}
	floor := h.floor(rateFloor)
	iv := max(p.Interval, floor)
	if iv == h.interval {
		return
	}
	h.interval = iv
	if iv > floor {
		h.troubled(rateFloor).cut = true
	} else if h.t != nil {
		h.t.cut = false
	}
}

// sharedWait is wait for a Guard with a Pacer: the schedule is the
// Pacer's, taken at the gate, so only a known pause longer than limit
// defers the request here.
func (g *Guard) sharedWait(h *host, u *url.URL, limit time.Duration) error {
	g.watch(g.Pacer)
	n, err := g.lockOpen(h, u)
	if err != nil {
		return err
	}
	pu := h.pauseUntil
	h.mu.Unlock()
	if time.Duration(pu-n) > limit {
		return g.deferred(h, u, pu, pu, false)
	}
	return nil
}

// sharedGate is gate for a Guard with a Pacer: it waits out a known
// pause, then takes the request's slot from the Pacer (one call) and
// sleeps until it comes. A slot beyond limit is taken all the same, if it
// is within sharedHorizon, and the request is deferred to it, holding it
// (slot): when it comes back it goes without asking again, so deferred
// requests return one by one, each to its own slot, rather than together
// to the first free one. A pause learned meanwhile (Watch, or a strike of
// this Guard) voids the slot: the request waits for the pause's end and
// takes a new one.
func (g *Guard) sharedGate(ctx context.Context, p Pacer, h *host, u *url.URL, limit time.Duration, slot bool) error {
	g.watch(p)
	for {
		n, err := g.lockOpen(h, u)
		if err != nil {
			return err
		}
		if pu := h.pauseUntil; pu > n {
			slot = false // a pause since the slot was taken voids it
			if time.Duration(pu-n) > limit {
				h.mu.Unlock()
				return g.deferred(h, u, pu, pu, false)
			}
			if _, err := g.sleepFor(ctx, h, u, time.Duration(pu-n)); err != nil {
				return err
			}
			continue
		}
		if slot {
			h.lastSend = max(h.lastSend, n)
			return g.sharedPass(h, n)
		}
		floor := h.floor(g.rateFloor())
		horizon := limit
		if limit != maxDuration && ctx.Value(noDeferral{}) == nil {
			horizon = max(limit, sharedHorizon*g.maxWait())
		}
		h.waiters++ // not evicted during the call
		h.mu.Unlock()
		s, err := p.Reserve(ctx, h.name, floor, horizon)
		h.mu.Lock()
		h.waiters--
		if err != nil {
			h.mu.Unlock()
			if ctx.Err() != nil {
				return g.ended(u, ctx.Err())
			}
			if limit == maxDuration {
				// The Guard's own robots.txt fetch, on its own goroutine:
				// wait for the Pacer rather than fail robots.txt.
				if err := g.pause(ctx, g.pacerRetry(), nil); err != nil {
					return g.ended(u, err)
				}
				continue
			}
			return g.pacerDown(h, u, err)
		}
		g.pacer.failures.Store(0)
		n = g.clock().UnixNano()
		h.apply(n, s.Pace, g.rateFloor())
		at := addNanos(n, s.Wait)
		if !s.Reserved || s.Wait > limit {
			pu := h.pauseUntil
			h.mu.Unlock()
			return g.deferred(h, u, at, pu, s.Reserved)
		}
		h.lastSend = max(h.lastSend, at)
		if s.Wait > 0 {
			voided, err := g.sleepFor(ctx, h, u, s.Wait)
			if err != nil {
				return err
			}
			if voided {
				continue
			}
			h.mu.Lock()
		}
		return g.sharedPass(h, at)
	}
}

// sharedHorizon, times MaxWait, is how far ahead a deferred request takes
// its slot in a shared schedule: a member that dies with deferred requests
// leaves their slots unused for at most that long.
const sharedHorizon = 10

// sharedPass counts a request that passes h's gate in the slot at; h.mu
// must be held, and is released.
func (g *Guard) sharedPass(h *host, at int64) error {
	h.sent++
	h.mu.Unlock()
	g.totals[cSent].Add(1)
	g.passed(h, time.Unix(0, at))
	return nil
}

// pacerDown returns the deferral of a request whose slot the Pacer could
// not give: it is sent again after a pause that doubles with each failed
// call in a row, from pacerRetryMin up to pacerRetryMax.
func (g *Guard) pacerDown(h *host, u *url.URL, err error) error {
	d := g.pacerRetry()
	g.count(h, cDeferred)
	return &DeferredError{URL: u, Until: g.clock().Add(d), Err: fmt.Errorf("%w: %w", ErrPacerUnavailable, err)}
}

// pacerRetry counts a failed Pacer call and returns how long to wait
// before the next.
func (g *Guard) pacerRetry() time.Duration {
	n := g.pacer.failures.Add(1)
	d := pacerRetryMin
	for i := int32(1); i < n && d < pacerRetryMax; i++ {
		d *= 2
	}
	return min(d, pacerRetryMax)
}

// sharedStrike reports a strike of h, which paused it for pause, to the
// Pacer and merges the answer. A failed call leaves the local pause in
// force (the next Reserve fails too, and defers).
func (g *Guard) sharedStrike(ctx context.Context, p Pacer, h *host, c class, pause time.Duration) {
	g.watch(p)
	factor := 1.25
	if c == hard {
		factor = 2
	}
	h.mu.Lock()
	floor := h.floor(g.rateFloor())
	h.mu.Unlock()
	pc, err := p.Strike(ctx, h.name, Strike{
		Pause:   pause,
		Factor:  factor,
		Floor:   floor,
		Ceiling: min(maxInterval, g.maxBackoff()),
		From:    minCutInterval,
	})
	if err != nil {
		return
	}
	h.mu.Lock()
	h.apply(g.clock().UnixNano(), pc, g.rateFloor())
	h.mu.Unlock()
}

// sharedRecover reports one step of h's recovery to the Pacer.
func (g *Guard) sharedRecover(ctx context.Context, p Pacer, h *host, interval, floor time.Duration) {
	pc, err := p.Recover(ctx, h.name, interval, floor)
	if err != nil {
		return
	}
	h.mu.Lock()
	h.apply(g.clock().UnixNano(), pc, g.rateFloor())
	h.mu.Unlock()
}
