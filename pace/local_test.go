package pace_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/internal/pacertest"
	"github.com/robotsmw/robotsmw/pace"
)

// localPacer is a Pacer made of one pace.Local per host under one lock,
// as a Guard with no Pacer keeps them (one per host state, under the
// host's lock): it forgets a host that holds nothing (Holds) and is not
// cut once no call was made for it within idle, sweeping at most once
// per idle. A host is cut while the interval its calls report is above
// the floor they asked with, as a Guard tells.
type localPacer struct {
	now  func() time.Time
	idle time.Duration

	mu        sync.Mutex // guards hosts, last, lastSweep and the Locals
	hosts     map[string]*pace.Local
	last      map[string]time.Time // a host's last call
	cut       map[string]bool
	lastSweep time.Time
}

func (p *localPacer) get(host string) (*pace.Local, time.Time) {
	now := p.now()
	if p.hosts == nil {
		p.hosts, p.last, p.cut, p.lastSweep = map[string]*pace.Local{}, map[string]time.Time{}, map[string]bool{}, now
	}
	if now.Sub(p.lastSweep) >= p.idle {
		p.lastSweep = now
		for k, l := range p.hosts {
			if !l.Holds(now) && !p.cut[k] && now.Sub(p.last[k]) >= p.idle {
				delete(p.hosts, k)
				delete(p.last, k)
			}
		}
	}
	l := p.hosts[host]
	if l == nil {
		l = new(pace.Local)
		p.hosts[host] = l
	}
	p.last[host] = now
	return l, now
}

// call runs f on host's Local at the Pacer's time, and notes whether the
// State it returns is cut above floor.
func (p *localPacer) call(host string, floor time.Duration, f func(l *pace.Local, now time.Time) pace.State) pace.State {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, now := p.get(host)
	st := f(l, now)
	p.cut[host] = st.Interval > floor
	return st
}

func (p *localPacer) Reserve(_ context.Context, host string, a pace.Ask) (pace.Slot, error) {
	var s pace.Slot
	p.call(host, a.Floor, func(l *pace.Local, now time.Time) pace.State { s = l.Reserve(a, now); return s.State })
	return s, nil
}

func (p *localPacer) Release(_ context.Context, host string, r pace.Release) (pace.State, error) {
	return p.call(host, r.Floor, func(l *pace.Local, now time.Time) pace.State { return l.Release(r, now) }), nil
}

func (p *localPacer) Strike(_ context.Context, host string, s pace.Strike) (pace.State, error) {
	return p.call(host, s.Floor, func(l *pace.Local, now time.Time) pace.State { return l.Strike(s, now) }), nil
}

func (p *localPacer) Recover(_ context.Context, host string, interval, floor time.Duration) (pace.State, error) {
	return p.call(host, floor, func(l *pace.Local, now time.Time) pace.State { return l.Recover(interval, floor, now) }), nil
}

func (p *localPacer) Watch(func(string, pace.State)) func() { return func() {} }

func (p *localPacer) kept() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.hosts)
}

// The Pacer contract, against Locals kept as a Guard with no Pacer keeps
// them: each host's schedule follows the same rules as a Memory's.
func TestLocalContract(t *testing.T) {
	pacertest.Run(t, func(t *testing.T) pacertest.Home {
		now, advance := manualClock()
		p := &localPacer{now: now, idle: time.Minute}
		return pacertest.Home{
			Pacer:   p,
			Advance: advance,
			Idle:    time.Minute,
			Hosts:   p.kept,
		}
	})
}

// A Local's Holds says what it holds still due: a lease, a position
// ahead, a pause; not a cut interval nor a response time alone.
func TestLocalHolds(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var l pace.Local
	if l.Holds(now) {
		t.Fatalf("Holds of a zero Local = true, want false")
	}
	s := l.Reserve(pace.Ask{Floor: time.Second, Limit: time.Minute}, now)
	if s.Lease == 0 || !l.Holds(now) {
		t.Fatalf("Reserve = %+v, Holds = %v; want a lease held", s, l.Holds(now))
	}
	l.Release(pace.Release{Lease: s.Lease, Latency: 50 * time.Millisecond}, now.Add(50*time.Millisecond))
	if !l.Holds(now.Add(999 * time.Millisecond)) {
		t.Errorf("Holds before the next position = false, want true")
	}
	if l.Holds(now.Add(time.Second)) {
		t.Errorf("Holds once the position passed = true, want false (a response time alone)")
	}
	st := l.Strike(pace.Strike{Pause: time.Second, Factor: 2, Floor: time.Second, Ceiling: time.Minute}, now.Add(2*time.Second))
	if st.Interval <= time.Second || !l.Holds(now.Add(2500*time.Millisecond)) {
		t.Errorf("Strike = %+v, Holds during its pause = %v; want a cut interval, and the pause held", st, l.Holds(now.Add(2500*time.Millisecond)))
	}
	if l.Holds(now.Add(time.Hour)) {
		t.Errorf("Holds of a cut host an hour later = true, want false: a cut is the caller's to keep")
	}
}

// A Local made for a host again numbers its leases apart from the one
// before: a lease of that one given back late frees none of the new one's.
func TestLocalLeasesNumberedApart(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var old, fresh pace.Local
	stale := old.Reserve(pace.Ask{Limit: time.Minute}, now).Lease
	s := fresh.Reserve(pace.Ask{Limit: time.Minute}, now.Add(time.Minute))
	if s.Lease == 0 || s.Lease == stale {
		t.Fatalf("leases %d and %d; want two, apart", stale, s.Lease)
	}
	if st := fresh.Release(pace.Release{Lease: stale, Unsent: true}, now.Add(time.Minute)); st.InFlight != 1 {
		t.Errorf("Release of the old Local's lease: InFlight = %d, want 1 (the new lease kept)", st.InFlight)
	}
}
