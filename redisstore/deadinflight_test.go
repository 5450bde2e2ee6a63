package redisstore

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/internal/redistest"
	"github.com/robotsmw/robotsmw/pace"
)

// A member dies with a request in flight (its lease runs out, never
// given back): in the shared schedule, that request, once given back and
// asking again, goes before the other requests the member held (they
// wait for it), while the host's requests that were not given back go on
// meanwhile (one of them may have to end to free a queue thread for it);
// a request asking on behalf of it (relay) passes too, and leaves it its
// claim.
func TestPacerDeadInFlightFirst(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	dead, live := New(srv.Client()), New(srv.Client())
	dead.ttl, live.ttl = 300*time.Millisecond, 300*time.Millisecond
	dead.init()
	live.init()
	const host = "dead.example"
	u := func(p string) *url.URL { return &url.URL{Scheme: "http", Host: host, Path: p} }
	inFlight, held, other, relayed := u("/in-flight"), u("/held"), u("/other"), u("/relayed")
	ask := func(v *url.URL) pace.Ask {
		return pace.Ask{Limit: time.Minute, InFlight: 1, Positioned: true, URL: v}
	}
	reserve := func(call string, v *url.URL, front bool, relay *url.URL) pace.Slot {
		t.Helper()
		r := ""
		if relay != nil {
			r = relay.String()
		}
		s, err := live.member.reserve(ctx, host, ask(v), front, r, nil)
		if err != nil {
			t.Fatalf("%s: %v", call, err)
		}
		return s
	}
	release := func(call string, s pace.Slot) {
		t.Helper()
		if _, err := live.pacer.Release(ctx, host, pace.Release{Lease: s.Lease, Latency: time.Millisecond}); err != nil {
			t.Fatalf("%s: Release: %v", call, err)
		}
	}
	s, err := dead.pacer.Reserve(ctx, host, ask(inFlight))
	if err != nil || s.Lease == 0 {
		t.Fatalf("the dying member's Reserve = %+v, %v; want a lease", s, err)
	}
	dead.pacer.unhold(host, s.Lease) // it dies: nothing renews its lease
	time.Sleep(2 * dead.memberTTL()) // which runs out

	if s := reserve("Reserve of another request the dead member held", held, true, nil); s.Lease != 0 || s.Wait <= 0 {
		t.Fatalf("Reserve of another request the dead member held = %+v; want a wait for the one in flight", s)
	}
	s = reserve("Reserve of a request not given back", other, false, nil)
	if s.Lease == 0 {
		t.Fatalf("Reserve of a request not given back = %+v; want a lease (it may free a thread)", s)
	}
	release("the request not given back", s)
	s = reserve("Reserve on behalf of the request in flight", relayed, false, inFlight)
	if s.Lease == 0 {
		t.Fatalf("Reserve on behalf of the request in flight = %+v; want a lease", s)
	}
	release("the request on its behalf", s)
	if s := reserve("Reserve of another request the dead member held, after the relay", held, true, nil); s.Lease != 0 {
		t.Fatalf("Reserve of another request the dead member held, after the relay = %+v; want a wait for the one in flight", s)
	}
	s = reserve("Reserve of the request in flight, given back", inFlight, true, nil)
	if s.Lease == 0 {
		t.Fatalf("Reserve of the request in flight, given back = %+v; want the lease", s)
	}
	release("the request in flight", s)
	if s := reserve("Reserve of another request the dead member held, last", held, true, nil); s.Lease == 0 {
		t.Fatalf("Reserve of another request the dead member held, last = %+v; want the lease", s)
	}
}
