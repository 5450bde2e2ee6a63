package robotsmw

import (
	"context"
	"net/url"
	"sync"
	"time"
)

// A fakeClock is a manual clock whose sleep advances it at once.
type fakeClock struct {
	mu sync.Mutex // guards t
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func (c *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d > 0 {
		c.advance(d)
	}
	return nil
}

// fakeGuard returns a Guard on clock c with fixed jitter u.
func fakeGuard(g *Guard, c *fakeClock, u float64) *Guard {
	g.now, g.sleep, g.rand = c.now, c.sleep, func() float64 { return u }
	return g
}

// wait is the OnRequest step of a request in tests: robots.txt aside, it
// takes the request's position in h's schedule.
func (g *Guard) wait(ctx context.Context, h *host, u *url.URL, limit time.Duration, reserved bool) error {
	_, _, err := g.schedule(ctx, h, u, limit, reserved, false, time.Time{})
	return err
}

// gateEnded is the gate of a request in tests whose response ends as
// soon as it is sent: it passes the gate and gives the lease back.
func (g *Guard) gateEnded(ctx context.Context, h *host, u *url.URL, limit time.Duration) error {
	l, _, err := g.gate(ctx, h, u, limit, true, time.Time{})
	if err != nil {
		return err
	}
	g.release(h, l, 0, false, false, time.Time{}, false)
	return nil
}
