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
// the whole fleet. After Close, nothing renews it any more.
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
	if err != nil || s2.Lease == 0 {
		t.Errorf("other member's Reserve 4 TTLs after a lease of 3 TTLs never given back = %+v, %v; want a lease (it ran out)", s2, err)
	}
	f.Close()
	f.pacer.renew.mu.Lock()
	running := f.pacer.renew.running
	f.pacer.renew.mu.Unlock()
	if running {
		t.Error("after Close: the renewing goroutine still runs")
	}
}
