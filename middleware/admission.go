package robotsmw

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/robotsmw/robotsmw/policy"
)

// minDeferral is the shortest wait before robots.txt is asked again, in
// case the cache reports a RetryAt that has already passed.
const minDeferral = 100 * time.Millisecond

// errHostPaused and errHostBusy are the causes of a hopDeferredError.
var (
	errHostPaused = errors.New("robotsmw: host paused")
	errHostBusy   = errors.New("robotsmw: host's rate limit would outlast the request's deadline")
)

// admit decides whether a request or redirect hop to u may be sent and
// waits until it may: robots.txt first, then the host's pause and rate
// limiter. It returns nil when the request may go on.
//
// bounded is set inside the HTTP client (redirect hops), where ctx carries
// the client's deadline: waits that would outlast it end at once with a
// *hopDeferredError instead, an unreachable robots.txt is not waited for
// there either, and the host's gate is passed too, since nothing else runs
// between the hop's admission and its sending. Unbounded admissions (colly's
// OnRequest) pass the gate later, in OnRequestHeaders.
func (g *Guard) admit(ctx context.Context, cache *policy.Cache, u *url.URL, agent string, bounded bool) error {
	h := g.host(u)
	if err := g.check(ctx, cache, h, u, agent, bounded); err != nil {
		return err
	}
	if err := g.wait(ctx, h, bounded); err != nil {
		return err
	}
	if bounded {
		return g.gate(ctx, h, true)
	}
	return nil
}

// check applies robots.txt to u for agent. While robots.txt is unreachable
// the request is deferred until the cache's RetryAt and robots.txt is asked
// again, at most maxRetries times (RFC 9309 §2.3.1.4: complete disallow,
// which is temporary; politeness.md §5.2 F). Only /robots.txt is exempt
// (RFC 9309 §2.2.2). It also applies the Crawl-delay to the host.
func (g *Guard) check(ctx context.Context, cache *policy.Cache, h *host, u *url.URL, agent string, bounded bool) error {
	if u.Path == "/robots.txt" {
		return nil
	}
	for n := 0; ; n++ {
		e, err := cache.Get(ctx, u)
		if err != nil {
			var fe *policy.FetchError
			if !errors.As(err, &fe) {
				return fmt.Errorf("robotsmw: %s not sent: %w", u.Redacted(), err)
			}
			if bounded {
				h.count(func(s *HostStats) *int64 { return &s.Deferred })
				return &hopDeferredError{until: e.RetryAt, robots: true, err: err}
			}
			if n >= g.maxRetries() {
				return fmt.Errorf("%w: %s deferred %d times: %w", ErrRobotsUnreachable, u.Redacted(), n, err)
			}
			h.count(func(s *HostStats) *int64 { return &s.Deferred })
			if err := g.pause(ctx, max(e.RetryAt.Sub(g.clock()), minDeferral)); err != nil {
				return fmt.Errorf("robotsmw: %s not sent: %w", u.Redacted(), err)
			}
			continue
		}
		if !e.Robots.Allowed(agent, u) {
			h.count(func(s *HostStats) *int64 { return &s.Blocked })
			return &DisallowedError{URL: u, Agent: agent, Decision: e.Robots.Explain(agent, u)}
		}
		d, _ := e.Robots.CrawlDelay(agent)
		if d > MaxCrawlDelay {
			if !g.ClampCrawlDelay {
				h.count(func(s *HostStats) *int64 { return &s.Blocked })
				return fmt.Errorf("%w: %s asks for %v, more than %v", ErrCrawlDelayTooLong, e.Origin, d, MaxCrawlDelay)
			}
			d = MaxCrawlDelay
		}
		h.setCrawlDelay(g.clock(), e.Origin, d)
		return nil
	}
}

// wait blocks until the host is not paused and its limiter grants a slot.
// See admit for bounded.
//
// x/time/rate's SetLimit does not re-time waiters that already reserved, so
// a waiter whose host was paused or cut while it slept reserves again.
func (g *Guard) wait(ctx context.Context, h *host, bounded bool) error {
	for {
		now, err := g.lockUnpaused(ctx, h, bounded)
		if err != nil {
			return err
		}
		if h.lim.AllowN(now, 1) {
			h.mu.Unlock()
			return nil
		}
		res := h.lim.ReserveN(now, 1)
		d, gen := res.DelayFrom(now), h.gen
		h.mu.Unlock()
		if bounded && outlasts(ctx, d) {
			res.CancelAt(now)
			return &hopDeferredError{until: now.Add(d), err: errHostBusy}
		}
		if err := g.pause(ctx, d); err != nil {
			res.CancelAt(g.clock())
			return err
		}
		h.mu.Lock()
		changed := h.gen != gen
		h.mu.Unlock()
		if !changed {
			return nil
		}
		res.CancelAt(g.clock())
	}
}

// gate is the last step before bytes go to the host, right before the HTTP
// client sends them: it waits while the host is paused, and spaces request
// starts by at least the host's interval. The limiter in wait orders the
// requests without holding colly's LimitRule slots; the gate keeps requests
// that bunched up behind a slot, or drifted while being scheduled, from
// reaching the host closer together than the interval. It counts the
// request as fetched.
func (g *Guard) gate(ctx context.Context, h *host, bounded bool) error {
	for {
		now, err := g.lockUnpaused(ctx, h, bounded)
		if err != nil {
			return err
		}
		at := h.lastSend.Add(h.interval)
		if !at.After(now) {
			h.lastSend = now
			h.stats.Fetched++
			h.mu.Unlock()
			g.passed(h, now)
			return nil
		}
		if bounded && outlasts(ctx, at.Sub(now)) {
			h.mu.Unlock()
			return &hopDeferredError{until: at, err: errHostBusy}
		}
		h.lastSend = at // the slot is taken while this request sleeps
		h.mu.Unlock()
		if err := g.pause(ctx, at.Sub(now)); err != nil {
			return err
		}
		h.mu.Lock()
		if g.clock().Before(h.pauseUntil) {
			h.mu.Unlock()
			continue
		}
		h.stats.Fetched++
		h.mu.Unlock()
		g.passed(h, at)
		return nil
	}
}

// lockUnpaused waits until h is not paused and returns the time it found so,
// with h.mu held; on error h.mu is not held.
func (g *Guard) lockUnpaused(ctx context.Context, h *host, bounded bool) (time.Time, error) {
	for {
		now := g.clock()
		h.mu.Lock()
		if !now.Before(h.pauseUntil) {
			return now, nil
		}
		until, excluded := h.pauseUntil, h.excluded
		h.mu.Unlock()
		if err := g.waitUntil(ctx, h.name, now, until, excluded, bounded); err != nil {
			return time.Time{}, err
		}
	}
}

// passed tells the test seam that a request passed h's gate in the slot at.
func (g *Guard) passed(h *host, at time.Time) {
	if g.onPass != nil {
		g.onPass(h.name, at)
	}
}

// waitUntil waits for the pause of the host named name to end at until.
func (g *Guard) waitUntil(ctx context.Context, name string, now, until time.Time, excluded, bounded bool) error {
	if excluded {
		return fmt.Errorf("%w: %s asked for a pause until %v, more than %v away", ErrGaveUp, name, until.Format(time.RFC3339), maxRetryAfter)
	}
	if bounded && outlasts(ctx, until.Sub(now)) {
		return &hopDeferredError{until: until, err: errHostPaused}
	}
	return g.pause(ctx, until.Sub(now))
}

// outlasts reports whether waiting d would end after ctx's deadline.
func outlasts(ctx context.Context, d time.Duration) bool {
	dl, ok := ctx.Deadline()
	return ok && time.Until(dl) < d
}

// host returns the state of u's host, creating it on first use.
func (g *Guard) host(u *url.URL) *host {
	name := hostKey(u)
	g.mu.RLock()
	h := g.hosts[name]
	g.mu.RUnlock()
	if h != nil {
		return h
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if h = g.hosts[name]; h == nil {
		if g.hosts == nil {
			g.hosts = make(map[string]*host)
		}
		h = newHost(name, g.rateFloor())
		g.hosts[name] = h
	}
	return h
}

// clock returns the current time of the Guard's clock.
func (g *Guard) clock() time.Time {
	if g.now != nil {
		return g.now()
	}
	return time.Now()
}

// pause sleeps for d or until ctx ends, whichever comes first.
func (g *Guard) pause(ctx context.Context, d time.Duration) error {
	if g.sleep != nil {
		return g.sleep(ctx, d)
	}
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
