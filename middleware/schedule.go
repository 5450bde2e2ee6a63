package robotsmw

import (
	"cmp"
	"context"
	"fmt"
	"github.com/robotsmw/robotsmw/pace"
	"io"
	"net/url"
	"sync/atomic"
	"time"
)

// Retries of an unreachable Pacer (docs/fleet.md: pause
// rather than run every member at full speed).
const (
	pacerRetryMin = time.Second
	pacerRetryMax = 30 * time.Second
)

// A pacerState is what a Guard keeps about its Pacer.
type pacerState struct {
	watchOnce atomic.Bool
	// leaseTTL is the LeaseTTL of the last lease a shared Pacer gave, in
	// nanoseconds (see guardTransport.stale); 0 until one did.
	leaseTTL atomic.Int64
	// downSince is when the Pacer's calls started failing, in Unix ns on
	// the Guard's clock, or 0 while it answers: how long the outage has
	// lasted sets how long requests are put off (see pacerRetry).
	downSince atomic.Int64
}

// watch registers the Guard with its Pacer, once.
func (g *Guard) watch(p pace.Pacer) {
	if g.pacer.watchOnce.Load() || !g.pacer.watchOnce.CompareAndSwap(false, true) {
		return
	}
	p.Watch(func(name string, pc pace.State) {
		if h := g.hosts.lookup(name); h != nil {
			h.mu.Lock()
			h.apply(g.clock().UnixNano(), pc, h.base)
			h.notify() // the waiters ask again (see pace.Pacer.Watch)
			h.mu.Unlock()
		}
	})
}

// apply merges what the Pacer said of the host at now into its local
// copy: the pause's later end, the interval and the smoothed response
// time. A pause that ends later than the one known voids the local waits,
// which take new positions. h.mu must be held.
func (h *host) apply(now int64, p pace.State, rateFloor time.Duration) {
	if p.Latency > 0 {
		h.latency = p.Latency
	}
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

// ask returns what a request to h asks of the schedule, within horizon;
// h.mu must be held.
func (g *Guard) ask(h *host, horizon time.Duration) pace.Ask {
	a := pace.Ask{
		Floor:    h.floor(h.base),
		Gap:      h.crawlDelay(),
		Limit:    horizon,
		InFlight: h.inFlight,
	}
	if !g.FixedPace {
		a.Latency = latencyFactor
	}
	return a
}

// schedule takes u's position in h's schedule and, with lease set, then
// its lease (see Pacer), and sleeps until they have come, but no longer
// than limit in all. It returns the lease: the request may be sent now,
// and the lease must be given back when its response ends (see flight).
//
// A wait longer than limit defers the request: to its position, which it
// keeps (the deferral is reserved: when the request comes back it goes
// without taking a new one, so deferred requests come back one by one
// rather than together), or to when the host is likely free. A position
// further away than sharedHorizon times MaxWait is not taken (with a
// shared Pacer). A pause learned meanwhile (a strike of this Guard, or
// Watch) voids the position: the request waits for the pause's end and
// takes a new one. A lease given back wakes the requests waiting for the
// host. positioned says the request holds its position from an earlier
// deferral.
//
// now is the time on the Guard's clock (zero: read it); schedule returns
// the time its request was given its slot at.
func (g *Guard) schedule(ctx context.Context, h *host, u *url.URL, limit time.Duration, positioned, lease bool, now time.Time) (uint64, time.Time, error) {
	p := g.Pacer // nil: the host's own pace.Local, under h.mu
	if p != nil {
		g.watch(p)
	}
	h.queued.Add(1)
	defer h.queued.Add(-1)
	var deadline int64 // set on the first turn, from lockOpen's clock read
	first := true
	horizon := limit
	switch {
	case g.Pacer == nil:
		// The Guard's own schedule dies with it: no position is lost.
		horizon = maxDuration
	case limit != maxDuration && ctx.Value(noDeferral{}) == nil:
		horizon = max(limit, sharedHorizon*g.maxWait())
	}
	for ; ; now = (time.Time{}) { // each turn after the first reads the clock
		var err error
		if now, err = g.lockOpen(h, u, now); err != nil {
			return 0, time.Time{}, err
		}
		n := now.UnixNano()
		if first {
			deadline, first = addNanos(n, limit), false
		}
		if pu := h.pauseUntil; pu > n {
			positioned = false // a pause since the position was taken voids it
			switch {
			case time.Duration(pu-n) > horizon:
				// No position that far ahead: come back at the pause's end.
				h.mu.Unlock()
				return 0, time.Time{}, g.deferred(h, u, pu, pu, n, false)
			case pu <= deadline:
				if _, err := g.sleepFor(ctx, h, u, time.Duration(pu-n)); err != nil {
					return 0, time.Time{}, err
				}
				continue
			}
			// Deferred beyond the pause: the Pacer gives the request its
			// position after it, so deferred requests come back one by
			// one rather than together at its end.
		}
		a := g.ask(h, horizon)
		a.URL = u
		jitter := g.Jitter > 0 && !positioned
		a.Positioned, a.NoLease = positioned, !lease || jitter
		var s pace.Slot
		if p == nil {
			s = h.sched.Reserve(a, now)
		} else {
			h.waiters++ // not evicted during the call
			h.mu.Unlock()
			s, err = p.Reserve(ctx, h.name, a)
			h.mu.Lock()
			h.waiters--
		}
		if err != nil {
			h.mu.Unlock()
			if ctx.Err() != nil {
				return 0, time.Time{}, g.ended(u, ctx.Err())
			}
			if limit == maxDuration {
				// The Guard's own robots.txt fetch, on its own goroutine:
				// wait for the Pacer rather than fail robots.txt.
				if err := g.pause(ctx, g.pacerRetry(), nil); err != nil {
					return 0, time.Time{}, g.ended(u, err)
				}
				continue
			}
			return 0, time.Time{}, g.pacerDown(h, u, err)
		}
		if g.pacer.downSince.Load() != 0 {
			// Written only when set: a store per request would bounce
			// the line between cores.
			g.pacer.downSince.Store(0)
		}
		if s.Wait > 0 || s.State.Paused > 0 || p != nil {
			// A wait or a pause is counted from the Pacer's answer (a
			// shared one's took a round trip): read the clock again. The
			// host's own schedule granted a slot at once at now: one
			// clock read per turn on the fast path.
			now = g.clock()
			n = now.UnixNano()
		}
		h.apply(n, s.State, h.base)
		if s.Lease == 0 {
			// The Pacer may hold a pause beyond maxRetryAfter that this
			// state did not know (the host was forgotten meanwhile, or
			// another member was told it): final, as in lockOpen.
			if err := h.refuseExcluded(u, n); err != nil {
				return 0, time.Time{}, err
			}
		}
		if jitter && s.Reserved {
			// A random delay after the position, never before it.
			s.Wait += time.Duration(g.random() * min(g.Jitter, 1) * float64(s.Interval))
		}
		if s.Lease != 0 && p != nil {
			ttl := int64(cmp.Or(s.LeaseTTL, pace.DefaultLease))
			if g.pacer.leaseTTL.Load() != ttl {
				// Written only when it changes: a store per request
				// would bounce the line between cores.
				g.pacer.leaseTTL.Store(ttl)
			}
		}
		if s.Lease != 0 {
			// Sent now: counted here, with h.mu held.
			h.sent++
			h.lastSend = max(h.lastSend, now.UnixNano())
			h.mu.Unlock()
			g.totals[cSent].Add(1)
			g.passed(h, now)
			return s.Lease, now, nil
		}
		if !lease && s.Reserved && s.Wait <= 0 {
			h.mu.Unlock()
			return 0, now, nil
		}
		positioned = s.Reserved
		at := addNanos(n, s.Wait)
		if !s.Reserved || at > deadline {
			pu := h.pauseUntil
			h.mu.Unlock()
			return 0, time.Time{}, g.deferred(h, u, at, pu, n, s.Reserved)
		}
		var voided bool
		if s.Reserved && s.InFlight >= a.InFlight {
			// Busy: the wait is for a lease to come back, an event rather
			// than a time; s.Wait only bounds it.
			voided, err = g.awaitFree(ctx, h, u, s.Wait)
		} else {
			voided, err = g.sleepFor(ctx, h, u, s.Wait)
		}
		if err != nil {
			return 0, time.Time{}, err
		}
		if voided {
			positioned = false
		}
	}
}

// awaitFree waits up to d, on the real clock (a lease comes back when a
// response ends, not at a time a test clock can skip to), for a lease of
// h to come back, a strike to void h's schedule (voided), or ctx to end.
// h.mu must be held; it is released.
func (g *Guard) awaitFree(ctx context.Context, h *host, u *url.URL, d time.Duration) (voided bool, err error) {
	return g.waitOn(h, u, func(woken <-chan struct{}) error { return realPause(ctx, d, woken) })
}

// sharedHorizon, times MaxWait, is how far ahead a deferred request takes
// its position: a member that dies with deferred requests leaves their
// positions unused for at most that long.
const sharedHorizon = 10

// latencyFactor times a host's smoothed response time is the least gap
// between the end of one of its responses and the next request, unless
// FixedPace is set: a host that takes 2 s to answer waits 2 s before the
// next request, so a crawler never keeps it busy more than half the time,
// and a host that slows down under load is given time to recover.
// Heritrix waits 5 times the last fetch's duration (delayFactor); Scrapy's
// AutoThrottle aims at its latency divided by the target concurrency. We
// take 1 with one request in flight: Heritrix's factor of 5 would slow a
// healthy 50 ms host with no Crawl-delay and a high Rate to 4 pages a
// second, and Rate and Crawl-delay remain floors either way.
const latencyFactor = 1.0

// release gives back, at now (zero: read the clock), the lease of a
// request to h whose response ended (or that was not sent, unsent)
// latency after it started, and wakes the requests waiting for the host.
// A Pacer that cannot be reached lets the lease run out.
//
// With page set, the response was a colly request's page, read to its end
// (or as far as colly wanted): it is counted in Stats.
func (g *Guard) release(h *host, lease uint64, latency time.Duration, failed, unsent bool, now time.Time, page bool) {
	r := pace.Release{Lease: lease, Latency: latency, Failed: failed, Unsent: unsent}
	if g.Pacer == nil {
		if now.IsZero() {
			now = g.clock()
		}
		h.mu.Lock()
		r.Floor = h.floor(h.base)
		h.apply(now.UnixNano(), h.sched.Release(r, now), h.base)
		h.released(page)
		g.counted(page)
		return
	}
	h.mu.Lock()
	r.Floor = h.floor(h.base) // for the Pace the Pacer returns
	h.mu.Unlock()
	pc, err := g.Pacer.Release(context.Background(), h.name, r)
	var n int64
	if err == nil && pc.Paused > 0 {
		n = g.clock().UnixNano() // apply reads the time only for a pause
	}
	h.mu.Lock()
	if err == nil {
		h.apply(n, pc, h.base)
	}
	h.released(page)
	g.counted(page)
}

// released wakes the requests waiting for h, whose lease was given back,
// and counts a page (see release); it releases h.mu.
func (h *host) released(page bool) {
	h.notify()
	if page {
		h.add(cPages)
	}
	h.mu.Unlock()
}

// counted counts a page in the Guard's totals (see release).
func (g *Guard) counted(page bool) {
	if page {
		g.totals[cPages].Add(1)
	}
}

// A flight is a request sent under a lease of its host: its end gives
// the lease back once, with the time the response took.
type flight struct {
	g     *Guard
	h     *host
	lease uint64
	start time.Time
	done  atomic.Bool
	page  bool // a colly request's: a clean end counts a page (see release)
}

// newFlight returns the flight of a request to h sent under lease at
// start (zero: now).
func (g *Guard) newFlight(h *host, lease uint64, start time.Time) *flight {
	f := new(flight)
	g.startFlight(f, h, lease, start)
	return f
}

// startFlight makes *f the flight of a request to h sent under lease at
// start (zero: now).
func (g *Guard) startFlight(f *flight, h *host, lease uint64, start time.Time) {
	if start.IsZero() {
		start = g.clock()
	}
	f.g, f.h, f.lease, f.start = g, h, lease, start
}

// end records the end of f's response (read to its end, failed or timed
// out), once; a nil flight has nothing to give back.
func (f *flight) end(failed bool) {
	if f == nil || f.done.Swap(true) {
		return
	}
	page := f.page && !failed
	if f.lease == 0 {
		if page {
			f.g.count(f.h, cPages)
		}
		return
	}
	now := f.g.clock()
	f.g.release(f.h, f.lease, now.Sub(f.start), failed, false, now, page)
}

// unsent gives f's lease back for a request that never reached the host
// (its dial was refused), and takes it out of the requests sent.
func (f *flight) unsent() {
	if f == nil || f.done.Swap(true) {
		return
	}
	f.h.mu.Lock()
	f.h.sent--
	f.h.mu.Unlock()
	f.g.totals[cSent].Add(-1)
	if f.lease != 0 {
		f.g.release(f.h, f.lease, 0, false, true, time.Time{}, false)
	}
}

// A flightBody ends its request's flight when the body is read to its
// end, fails or is closed.
type flightBody struct {
	io.ReadCloser
	f      *flight
	failed bool // a failed response: its latency never lowers the estimate
}

func (b *flightBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.f.end(b.failed || err != io.EOF)
	}
	return n, err
}

func (b *flightBody) Close() error {
	err := b.ReadCloser.Close()
	b.f.end(b.failed)
	return err
}

// pacerDown returns the deferral of a request whose slot the Pacer could
// not give: it is sent again after a pause as long as the outage so far,
// from pacerRetryMin up to pacerRetryMax (see pacerRetry).
func (g *Guard) pacerDown(h *host, u *url.URL, err error) error {
	d := g.pacerRetry()
	return &DeferredError{url: u, Until: g.clock().Add(d), Err: fmt.Errorf("%w: %w", pace.ErrUnavailable, err)}
}

// pacerRetry notes a failed Pacer call and returns how long to wait
// before the next: as long as the Pacer has been failing so far, at least
// pacerRetryMin and at most pacerRetryMax, so that a request that comes
// back and fails again waits twice as long. The wait grows with the
// outage, not with the number of requests that met it: a short outage
// that a thousand requests met puts none of them off for long.
func (g *Guard) pacerRetry() time.Duration {
	now := g.clock().UnixNano()
	since := g.pacer.downSince.Load()
	if since == 0 && !g.pacer.downSince.CompareAndSwap(0, now) {
		since = g.pacer.downSince.Load() // another failure set it first
	}
	if since == 0 || since > now {
		since = now // this failure starts the outage (or a success just ended one)
	}
	return min(max(time.Duration(now-since), pacerRetryMin), pacerRetryMax)
}

// strikeSchedule records a strike of h, which paused it for pause, in its
// schedule: the host's own (pace.Local), or the Pacer's, whose answer it
// merges. A failed call leaves the local pause in force (the next Reserve
// fails too, and defers).
func (g *Guard) strikeSchedule(ctx context.Context, h *host, c class, pause time.Duration) {
	factor := 1.25
	if c == hard {
		factor = 2
	}
	s := pace.Strike{
		Pause:   pause,
		Factor:  factor,
		Ceiling: min(maxInterval, g.maxBackoff()),
		From:    minCutInterval,
	}
	if g.Pacer == nil {
		now := g.clock()
		h.mu.Lock()
		s.Floor = h.floor(h.base)
		h.apply(now.UnixNano(), h.sched.Strike(s, now), h.base)
		h.notify() // the waiters ask again
		h.mu.Unlock()
		return
	}
	g.watch(g.Pacer)
	h.mu.Lock()
	s.Floor = h.floor(h.base)
	h.mu.Unlock()
	pc, err := g.Pacer.Strike(ctx, h.name, s)
	if err != nil {
		return
	}
	h.mu.Lock()
	h.apply(g.clock().UnixNano(), pc, h.base)
	h.mu.Unlock()
}

// recoverSchedule records one step of h's recovery in its schedule (see
// strikeSchedule).
func (g *Guard) recoverSchedule(ctx context.Context, h *host, interval, floor time.Duration) {
	if g.Pacer == nil {
		now := g.clock()
		h.mu.Lock()
		h.apply(now.UnixNano(), h.sched.Recover(interval, floor, now), h.base)
		h.mu.Unlock()
		return
	}
	pc, err := g.Pacer.Recover(ctx, h.name, interval, floor)
	if err != nil {
		return
	}
	h.mu.Lock()
	h.apply(g.clock().UnixNano(), pc, h.base)
	h.mu.Unlock()
}
