package pace_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/internal/pacertest"
	"github.com/robotsmw/robotsmw/pace"
)

// The Pacer contract, against the pace.Memory on a manual clock: its
// sweeps run on the calls after the clock moved on, with none between.
// Once with Idle zero (the default horizon), once with Idle set.
func TestMemoryContract(t *testing.T) {
	for _, tc := range []struct {
		name string
		idle time.Duration // pace.Memory.Idle
		want time.Duration // the horizon it documents
	}{
		{"default Idle", 0, pace.DefaultIdle},
		{"Idle 5s", 5 * time.Second, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pacertest.Run(t, func(t *testing.T) pacertest.Home {
				now, advance := manualClock()
				p := &pace.Memory{Now: now, Idle: tc.idle}
				return pacertest.Home{
					Pacer:   p,
					Advance: advance,
					Idle:    tc.want,
					Hosts:   p.HostsKept,
				}
			})
		})
	}
}

// A host whose interval is cut is kept past Idle, so that a crawl coming
// back finds it as slow as it left it, but not for ever: CutKeep after its
// last cut it is forgotten like any idle host.
func TestMemoryForgetsCutHost(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &pace.Memory{Now: func() time.Time { return now }}
	ask := pace.Ask{Floor: time.Second, Limit: time.Minute}
	if _, err := p.Strike(ctx, "cut.test", pace.Strike{Pause: time.Second, Factor: 2, Floor: time.Second, Ceiling: time.Minute}); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		advance time.Duration
		want    int // hosts kept after a call for another host
	}{
		{3 * pace.DefaultIdle, 2},
		{pace.CutKeep - 3*pace.DefaultIdle - time.Minute, 2},
		{2 * time.Minute, 1},
	} {
		now = now.Add(step.advance)
		if _, err := p.Reserve(ctx, "other.test", ask); err != nil {
			t.Fatal(err)
		}
		if got := p.HostsKept(); got != step.want {
			t.Errorf("HostsKept() after a cut and %v more = %d, want %d", step.advance, got, step.want)
		}
	}
}

// Times far ahead saturate rather than wrap round: a pause or an
// interval near the largest time.Duration holds the host, it is not
// taken as over.
func TestMemoryFarTimes(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &pace.Memory{Now: func() time.Time { return now }}
	const forever = time.Duration(1<<63 - 1)
	pc, err := p.Strike(ctx, "paused.test", pace.Strike{Pause: forever})
	if err != nil {
		t.Fatal(err)
	}
	if pc.Paused < 100*365*24*time.Hour {
		t.Errorf("Strike(Pause: max).Paused = %v, want the pause kept", pc.Paused)
	}
	ask := pace.Ask{Floor: forever, Limit: time.Minute}
	if s, err := p.Reserve(ctx, "paused.test", ask); err != nil || s.Lease != 0 || s.Wait <= time.Minute {
		t.Errorf("Reserve(paused.test) = %+v, %v; want no lease and a wait past the limit", s, err)
	}
	if s, err := p.Reserve(ctx, "slow.test", ask); err != nil || s.Lease == 0 {
		t.Fatalf("Reserve(slow.test) first = %+v, %v; want a lease", s, err)
	}
	if s, err := p.Reserve(ctx, "slow.test", ask); err != nil || s.Lease != 0 || s.Wait <= time.Minute {
		t.Errorf("Reserve(slow.test) second = %+v, %v; want no lease and a wait past the limit", s, err)
	}
}

// Any clock will do, the Unix epoch and before included: a lease
// granted at the epoch is a start the next is spaced from, and a response
// that ended before 1970 is no reason to wait until then.
func TestMemoryEarlyClocks(t *testing.T) {
	ctx := context.Background()
	epoch := &pace.Memory{Now: func() time.Time { return time.Unix(0, 0) }}
	a := pace.Ask{Floor: time.Second, InFlight: 2, Positioned: true, Limit: time.Hour}
	if s, err := epoch.Reserve(ctx, "h.test", a); err != nil || s.Lease == 0 {
		t.Fatalf("Reserve at the epoch = %+v, %v; want a lease", s, err)
	}
	if s, err := epoch.Reserve(ctx, "h.test", a); err != nil || s.Lease != 0 || s.Wait != time.Second {
		t.Errorf("Reserve again at the epoch = %+v, %v; want no lease and a wait of 1s", s, err)
	}
	now := time.Date(1969, 12, 1, 0, 0, 0, 0, time.UTC)
	early := &pace.Memory{Now: func() time.Time { return now }}
	if _, err := early.Release(ctx, "h.test", pace.Release{}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Second)
	if s, err := early.Reserve(ctx, "h.test", pace.Ask{Positioned: true, InFlight: 1, Limit: time.Hour}); err != nil || s.Wait > time.Second {
		t.Errorf("Reserve in 1969 a second after a response ended = %+v, %v; want a wait of 1s at most", s, err)
	}
}

// Clocks far from today (the zero time, 1800, 2200) pace a host as
// today's do: a lease, then the floor's wait; a pause of a minute is a
// minute.
func TestMemoryFarClocks(t *testing.T) {
	ctx := context.Background()
	for _, at := range []time.Time{{}, time.Date(1800, 1, 1, 0, 0, 0, 0, time.UTC), time.Unix(0, 0), time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)} {
		p := &pace.Memory{Now: func() time.Time { return at }}
		a := pace.Ask{Floor: time.Second, InFlight: 2, Positioned: true, Limit: time.Hour}
		if s, err := p.Reserve(ctx, "h.test", a); err != nil || s.Lease == 0 || s.Paused != 0 {
			t.Errorf("Reserve at %v = %+v, %v; want a lease", at, s, err)
		}
		if s, err := p.Reserve(ctx, "h.test", a); err != nil || s.Lease != 0 || s.Wait != time.Second {
			t.Errorf("Reserve again at %v = %+v, %v; want no lease and a wait of 1s", at, s, err)
		}
		if pc, err := p.Strike(ctx, "p.test", pace.Strike{Pause: time.Minute}); err != nil || pc.Paused != time.Minute {
			t.Errorf("Strike(Pause: 1m) at %v = %+v, %v; want Paused 1m", at, pc, err)
		}
	}
}

// manualClock returns a clock that stands still until advance moves it
// on; both are safe for concurrent use.
func manualClock() (now func() time.Time, advance func(time.Duration)) {
	var mu sync.Mutex
	t := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time { mu.Lock(); defer mu.Unlock(); return t },
		func(d time.Duration) { mu.Lock(); t = t.Add(d); mu.Unlock() }
}
