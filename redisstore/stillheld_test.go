package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/robotsmw/robotsmw/internal/redistest"
)

// A member that was stopped past its deadline comes back: its requests
// were given to another member, and it drops them before sending them.
// But a request it popped after it renewed again (another thread's pop,
// whose reply came before the one that told it its requests were gone)
// is its own: it is sent, not dropped, or no one would end it and the
// fleet would never be drained.
func TestStaleKeepsRequestPoppedAfterRenewal(t *testing.T) {
	srv := redistest.Start(t)
	const ttl = 300 * time.Millisecond
	a, b := testFleet(t, srv), testFleet(t, srv)
	a.ttl, b.ttl = ttl, ttl
	for i := range 4 {
		if err := a.Queue().AddRequest(serial(t, "http://x.test/"+string(rune('0'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	before := popOne(t, a)
	a.front.hold(before, 0, 1)
	// a is stopped; b's heartbeats give its request back.
	for end := time.Now().Add(5 * ttl); ; time.Sleep(ttl / 10) {
		if _, err := b.front.step(context.Background()); err != nil {
			t.Fatal(err)
		}
		if st, _ := b.Stats(context.Background()); st.Returned > 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatal("a's request not given back")
		}
	}
	if got := popOne(t, b); got != before {
		t.Fatalf("b's pop after a's deadline = %q, want a's %q", got, before)
	}
	// a runs again: one thread's pop renews it and takes a request...
	after := popOne(t, a)
	a.front.hold(after, 0, 2)
	// ... and the renewal of another (its heartbeat), which found a gone
	// first, is read after it.
	a.front.gone(int64(1))
	for _, tc := range []struct {
		entry string
		drop  bool
	}{{before, true}, {after, false}} {
		r := &colly.Request{Ctx: colly.NewContext()}
		r.Ctx.Put(ctxLease, tc.entry)
		a.checkLease(r)
		if r.IsAbort() != tc.drop {
			t.Errorf("checkLease of %q: dropped %v, want %v", tc.entry, r.IsAbort(), tc.drop)
		}
	}
}
