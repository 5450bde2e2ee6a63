package redisstore

import (
	"context"
	"github.com/robotsmw/robotsmw/pace"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/internal/pacertest"
	"github.com/robotsmw/robotsmw/internal/redistest"
)

// near reports whether got is within tol below want (Redis's clock moves
// on between calls, never back).
func near(got, want, tol time.Duration) bool { return got <= want && got > want-tol }

const tol = 200 * time.Millisecond

func TestPacerReserveShared(t *testing.T) {
	srv := redistest.Start(t)
	a, b := New(srv.Client()), New(srv.Client())
	ctx := context.Background()
	s1, err := a.Pacer().Reserve(ctx, "example.com", pace.Ask{Floor: time.Second, Limit: time.Minute, NoLease: true})
	if err != nil || !s1.Reserved || s1.Wait != 0 {
		t.Fatalf("first Reserve = %+v, %v; want reserved now", s1, err)
	}
	s2, err := b.Pacer().Reserve(ctx, "example.com", pace.Ask{Floor: time.Second, Limit: time.Minute, NoLease: true})
	if err != nil || !s2.Reserved || !near(s2.Wait, time.Second, tol) {
		t.Fatalf("second Reserve from another member = %+v, %v; want reserved about 1s on", s2, err)
	}
	s3, err := a.Pacer().Reserve(ctx, "example.com", pace.Ask{Floor: time.Second, Limit: 1500 * time.Millisecond, NoLease: true})
	if err != nil || s3.Reserved || !near(s3.Wait, 2*time.Second, tol) {
		t.Fatalf("Reserve beyond limit = %+v, %v; want not reserved, wait about 2s", s3, err)
	}
	// Not reserved: the next slot is still 2s away.
	s4, _ := b.Pacer().Reserve(ctx, "example.com", pace.Ask{Floor: time.Second, Limit: time.Minute, NoLease: true})
	if !s4.Reserved || !near(s4.Wait, 2*time.Second, tol) {
		t.Errorf("Reserve after a refused one = %+v; want reserved about 2s on", s4)
	}
	if s, _ := a.Pacer().Reserve(ctx, "other.example", pace.Ask{Floor: time.Second, Limit: time.Minute, NoLease: true}); !s.Reserved || s.Wait != 0 {
		t.Errorf("Reserve of another host = %+v; want reserved now", s)
	}
	if ttl := srv.Client().PTTL(ctx, a.key("pace", tag("example.com"))).Val(); ttl <= 0 || ttl > pacerKeep+4*time.Second {
		t.Errorf("PTTL of a host's pace key = %v, want in (0, %v]", ttl, pacerKeep+4*time.Second)
	}
}

func TestPacerStrikeMergesAndCutsOnce(t *testing.T) {
	srv := redistest.Start(t)
	fs := []*Fleet{New(srv.Client()), New(srv.Client()), New(srv.Client())}
	ctx := context.Background()
	var mu sync.Mutex
	var seen []pace.State
	stop := fs[2].Pacer().Watch(func(host string, p pace.State) {
		mu.Lock()
		seen = append(seen, p)
		mu.Unlock()
	})
	defer stop()
	defer fs[2].Close()
	strike := pace.Strike{Pause: 5 * time.Second, Factor: 2, Floor: time.Second, Ceiling: time.Minute, From: 100 * time.Millisecond}
	for i, f := range fs {
		s := strike
		if i == 1 {
			s.Pause = 2 * time.Second // shorter: never shortens the pause
		}
		pc, err := f.Pacer().Strike(ctx, "example.com", s)
		if err != nil {
			t.Fatalf("Strike #%d: %v", i, err)
		}
		if pc.Interval != 2*time.Second || !near(pc.Paused, 5*time.Second, tol) {
			t.Errorf("Strike #%d = %+v; want interval 2s (one cut per incident), pause about 5s", i, pc)
		}
	}
	s, _ := fs[0].Pacer().Reserve(ctx, "example.com", pace.Ask{Floor: time.Second, Limit: time.Minute, NoLease: true})
	if !s.Reserved || !near(s.Wait, 5*time.Second, tol) {
		t.Errorf("Reserve during the pause = %+v; want the slot at the pause's end", s)
	}
	if pc, _ := fs[1].Pacer().Recover(ctx, "example.com", 1500*time.Millisecond, time.Second); pc.Interval != 2*time.Second {
		t.Errorf("Recover while paused = %+v; want the cut kept (2s)", pc)
	}
	// A host cut without a pause recovers once its cut is an interval old.
	b := pace.Strike{Factor: 2, Floor: 100 * time.Millisecond, Ceiling: time.Minute}
	if pc, _ := fs[0].Pacer().Strike(ctx, "b.example", b); pc.Interval != 200*time.Millisecond {
		t.Fatalf("Strike(b.example) = %+v, want a 200ms interval", pc)
	}
	if pc, _ := fs[1].Pacer().Recover(ctx, "b.example", 150*time.Millisecond, 100*time.Millisecond); pc.Interval != 200*time.Millisecond {
		t.Errorf("Recover right after a cut = %+v; want the cut kept (200ms)", pc)
	}
	time.Sleep(250 * time.Millisecond)
	if pc, _ := fs[1].Pacer().Recover(ctx, "b.example", 150*time.Millisecond, 100*time.Millisecond); pc.Interval != 150*time.Millisecond {
		t.Errorf("Recover to 150ms = %+v", pc)
	}
	if pc, _ := fs[1].Pacer().Recover(ctx, "b.example", 50*time.Millisecond, 100*time.Millisecond); pc.Interval != 100*time.Millisecond {
		t.Errorf("Recover below the floor = %+v; want the 100ms floor", pc)
	}
	for i := 0; i < 100; i++ {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n >= 4 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 4 {
		t.Fatalf("Watch saw %d strikes, want 4", len(seen))
	}
	if !near(seen[2].Paused, 5*time.Second, tol) || seen[2].Interval != 2*time.Second {
		t.Errorf("Watch's last event = %+v", seen[2])
	}
}

func TestPacerDown(t *testing.T) {
	srv := redistest.Start(t)
	pause := New(srv.Client())
	slow := New(srv.Client())
	slow.WhenDown, slow.SlowFactor = Slow, 3
	var downs []error
	var mu sync.Mutex
	pause.OnDown = func(err error) {
		mu.Lock()
		downs = append(downs, err)
		mu.Unlock()
	}
	ctx := context.Background()
	srv.Stop()
	if _, err := pause.Pacer().Reserve(ctx, "example.com", pace.Ask{Floor: time.Second, Limit: time.Minute, NoLease: true}); err == nil {
		t.Errorf("Reserve with Redis down and Pause: no error")
	}
	s1, err1 := slow.Pacer().Reserve(ctx, "example.com", pace.Ask{Floor: time.Second, Limit: time.Minute, NoLease: true})
	s2, err2 := slow.Pacer().Reserve(ctx, "example.com", pace.Ask{Floor: time.Second, Limit: time.Minute, NoLease: true})
	// A call to a stopped Redis takes a while (go-redis dials again), so
	// the second slot is less than 3s from the moment it is asked for.
	if err1 != nil || err2 != nil || !s2.Reserved || s2.Interval != 3*time.Second || !near(s2.Wait, 3*time.Second, 2*time.Second) {
		t.Errorf("Reserve with Redis down and Slow ×3 = %+v, %v, %+v, %v; want local slots 3s apart", s1, err1, s2, err2)
	}
	srv.Restart()
	if _, err := pause.Pacer().Reserve(ctx, "example.com", pace.Ask{Floor: time.Second, Limit: time.Minute, NoLease: true}); err != nil {
		t.Errorf("Reserve after Redis restarted: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(downs) != 2 || downs[0] == nil || downs[1] != nil {
		t.Errorf("OnDown calls = %v, want [error, nil]", downs)
	}
}

// The Pacer contract, against Redis's clock: the same table as the
// pace.Memory's.
func TestPacerContract(t *testing.T) {
	srv := redistest.Start(t)
	pacertest.Run(t, func(t *testing.T) pacertest.Home {
		srv.Client().FlushAll(context.Background())
		f := New(srv.Client())
		f.PacerIdle = contractIdle
		return pacertest.Home{
			Pacer: f.Pacer(), Advance: time.Sleep, Tol: 60 * time.Millisecond,
			Idle: contractIdle, Hosts: func() int { return pacerHosts(t, f) },
		}
	})
}

// contractIdle is the contract's idle horizon on Redis's clock: short, as
// its eviction cases sleep a few times it, and a few times their Tol.
const contractIdle = 300 * time.Millisecond

// pacerHosts returns how many hosts f's Pacer holds state for in Redis:
// the hosts of its live pace and lease keys.
func pacerHosts(t *testing.T, f *Fleet) int {
	t.Helper()
	ctx := context.Background()
	hosts := make(map[string]bool)
	for _, kind := range []string{"pace", "lease"} {
		it := f.client.Scan(ctx, 0, f.politeKey(kind, "{*}"), 1000).Iterator()
		for it.Next(ctx) {
			k := it.Val()
			// EXISTS, in case SCAN listed a key that has just expired.
			if f.client.Exists(ctx, k).Val() == 1 {
				hosts[k[strings.IndexByte(k, '{'):]] = true
			}
		}
		if err := it.Err(); err != nil {
			t.Fatalf("SCAN of the %s keys: %v", kind, err)
		}
	}
	return len(hosts)
}
