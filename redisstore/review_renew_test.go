package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/internal/redistest"
	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// Review: a lease a live member never gives back (a Guard.Transport
// client that never closes a body, a flight that leaks) used to run out
// a member's TTL after it was granted (pacertest: "a lease never given
// back runs out"; pacer.go: "the fleet's in-flight count never stays
// taken"). With renewal it is kept for as long as the member lives, and
// the host is closed to the whole fleet.
func TestReviewLeakedLeaseRenewedForever(t *testing.T) {
	srv := redistest.Start(t)
	const ttl = 300 * time.Millisecond
	f := New(srv.Client())
	f.ttl = ttl
	defer f.Close()
	p := f.Pacer()
	ctx := context.Background()
	s, err := p.Reserve(ctx, "h.test", robotsmw.Ask{Positioned: true})
	if err != nil || s.Lease == 0 {
		t.Fatalf("Reserve = %+v, %v; want a lease", s, err)
	}
	// Never given back. Another member asks after 4 TTLs.
	g := New(srv.Client())
	g.ttl = ttl
	defer g.Close()
	time.Sleep(4 * ttl)
	s2, err := g.Pacer().Reserve(ctx, "h.test", robotsmw.Ask{Positioned: true})
	if err != nil || s2.Lease == 0 {
		t.Errorf("other member's Reserve 4 TTLs after a lease never given back = %+v, %v; want a lease (it ran out before renewal)", s2, err)
	}
}
