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
// host's lock): it forgets a host that holds nothing once no call was
// made for it within idle, sweeping at most once per idle.
type localPacer struct {
	now  func() time.Time
	idle time.Duration

	mu        sync.Mutex // guards hosts, last, lastSweep and the Locals
	hosts     map[string]*pace.Local
	last      map[string]time.Time // a host's last call
	lastSweep time.Time
}

func (p *localPacer) get(host string) (*pace.Local, time.Time) {
	now := p.now()
	if p.hosts == nil {
		p.hosts, p.last, p.lastSweep = map[string]*pace.Local{}, map[string]time.Time{}, now
	}
	if now.Sub(p.lastSweep) >= p.idle {
		p.lastSweep = now
		for k, l := range p.hosts {
			if !l.Holds(now) && now.Sub(p.last[k]) >= p.idle {
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

func (p *localPacer) Reserve(_ context.Context, host string, a pace.Ask) (pace.Slot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, now := p.get(host)
	return l.Reserve(a, now), nil
}

func (p *localPacer) Release(_ context.Context, host string, r pace.Release) (pace.State, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, now := p.get(host)
	return l.Release(r, now), nil
}

func (p *localPacer) Strike(_ context.Context, host string, s pace.Strike) (pace.State, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, now := p.get(host)
	return l.Strike(s, now), nil
}

func (p *localPacer) Recover(_ context.Context, host string, interval, floor time.Duration) (pace.State, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, now := p.get(host)
	return l.Recover(interval, floor, now), nil
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
		var mu sync.Mutex
		now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		p := &localPacer{now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }, idle: time.Minute}
		return pacertest.Home{
			Pacer:   p,
			Advance: func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() },
			Idle:    time.Minute,
			Hosts:   p.kept,
		}
	})
}

// A Local's Holds says what forgetting it would lose: a lease, a position
// ahead, a pause, a cut interval; not a response time alone.
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
	l.Strike(pace.Strike{Pause: time.Second, Factor: 2, Floor: time.Second, Ceiling: time.Minute}, now.Add(2*time.Second))
	if !l.Holds(now.Add(time.Hour)) {
		t.Errorf("Holds of a cut host an hour later = false, want true (its interval)")
	}
}
