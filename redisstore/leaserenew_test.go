package redisstore

import (
	"context"
	"github.com/robotsmw/robotsmw/pace"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/internal/redistest"
)

// A lease a live member never gives back (a Guard.Transport client that
// never closes a body, a flight that leaks) is renewed while its member
// lives, but not past its own life (Ask.Lease; DefaultLease by default),
// as a pace.Memory's: then it runs out, and the host is free again for
// the whole fleet — a TTL later at most if nobody asked for the host
// meanwhile, which the fleet cannot tell from Redis being away (see
// luaTendLeases). After Close, nothing renews it any more.
func TestLeakedLeaseRunsOut(t *testing.T) {
	srv := redistest.Start(t)
	const ttl = 300 * time.Millisecond
	f := New(srv.Client())
	f.ttl = ttl
	defer f.Close()
	p := f.Pacer()
	ctx := context.Background()
	s, err := p.Reserve(ctx, "h.test", pace.Ask{Positioned: true, Lease: 3 * ttl})
	if err != nil || s.Lease == 0 || s.LeaseTTL != ttl {
		t.Fatalf("Reserve = %+v, %v; want a lease for the member's TTL %v", s, err, ttl)
	}
	// Never given back. Another member asks while it is renewed, and
	// after its life.
	g := New(srv.Client())
	g.ttl = ttl
	defer g.Close()
	time.Sleep(2 * ttl)
	if s2, err := g.Pacer().Reserve(ctx, "h.test", pace.Ask{Positioned: true}); err != nil || s2.Lease != 0 {
		t.Errorf("other member's Reserve 2 TTLs after the lease was granted = %+v, %v; want none (renewed)", s2, err)
	}
	time.Sleep(2 * ttl)
	s2, err := g.Pacer().Reserve(ctx, "h.test", pace.Ask{Positioned: true})
	for end := time.Now().Add(2 * ttl); err == nil && s2.Lease == 0 && time.Now().Before(end); {
		time.Sleep(ttl / 10)
		s2, err = g.Pacer().Reserve(ctx, "h.test", pace.Ask{Positioned: true})
	}
	if err != nil || s2.Lease == 0 {
		t.Errorf("other member's Reserve 6 TTLs after a lease of 3 TTLs never given back = %+v, %v; want a lease (it ran out)", s2, err)
	}
	f.Close()
	f.pacer.renew.mu.Lock()
	running := f.pacer.renew.running
	f.pacer.renew.mu.Unlock()
	if running {
		t.Error("after Close: the renewing goroutine still runs")
	}
}

// A lease whose holder lives on while Redis is away (down, paused, or
// restarted from its append-only file) for longer than the lease's TTL is
// not taken for a dead member's once Redis is back: its holder could not
// renew it, and its response still runs, so the host's place stays taken
// until the holder gives it back (docs/fleet.md).
func TestLeaseSurvivesRedisOutage(t *testing.T) {
	srv := redistest.Start(t)
	const ttl = time.Second
	f, g := New(srv.Client()), New(srv.Client())
	f.ttl, g.ttl = ttl, ttl
	defer f.Close()
	defer g.Close()
	ctx := context.Background()
	s, err := f.Pacer().Reserve(ctx, "h.test", pace.Ask{Positioned: true, Lease: time.Hour})
	if err != nil || s.Lease == 0 {
		t.Fatalf("Reserve = %+v, %v; want a lease", s, err)
	}
	srv.Stop()
	time.Sleep(3 * ttl)
	srv.Restart()
	reserve := func() pace.Slot {
		deadline := time.Now().Add(10 * time.Second)
		for {
			s, err := g.Pacer().Reserve(ctx, "h.test", pace.Ask{Positioned: true})
			if err == nil {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("Reserve after Redis came back: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if s2 := reserve(); s2.Lease != 0 {
		t.Errorf("other member's Reserve after an outage of 3 TTLs = %+v; want no lease: the holder's response still runs", s2)
	}
	if _, err := f.Pacer().Release(ctx, "h.test", pace.Release{Lease: s.Lease}); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if s2 := reserve(); s2.Lease == 0 {
		t.Errorf("other member's Reserve once the lease was given back = %+v; want a lease", s2)
	}
}
