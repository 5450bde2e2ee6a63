package pace

import (
	"context"
	"strings"
	"sync"
	"time"
)

// A Memory is a [Pacer] in memory, a [Local] per host: the Guards of one
// process that share one Memory (as their Guard.Pacer) pace each host as
// one (several collectors with Guards of their own, say). A Guard with no
// Pacer keeps each host's Local itself. It is also the reference for
// what a Pacer does; package redisstore does the same over Redis, for a
// fleet of processes.
//
// The zero Memory is ready to use. It is safe for concurrent use by
// multiple goroutines.
//
// A host's state is forgotten once it holds nothing — its schedule and
// pause are past, its interval is not cut, no lease is held — and no
// response of it ended within Idle (within CutKeep, or Idle if longer,
// of its last cut or response for a host whose interval is cut: a crawl
// that comes back to it within a day finds it as slow as it left it):
// its smoothed response time is then unknown again, as for a host first
// seen. So memory grows with the hosts being crawled, not with every host
// ever seen. Sweeps are amortised, with no goroutine: a call of the Pacer
// (for any host) sweeps once Idle has passed since the last sweep, so a
// host that went idle is forgotten by the first call twice Idle later, at
// the latest. redisstore's Pacer keeps the same rules with a
// TTL per host (its Fleet.PacerIdle; a cut host CutKeep past its last
// write).
type Memory struct {
	// Now returns the current time. If nil, time.Now is used.
	Now func() time.Time

	// Idle is how long a host that holds nothing is kept after its last
	// response ended, and how often hosts are swept (see above). If zero,
	// DefaultIdle. Set it before the first call.
	Idle time.Duration

	// mu guards hosts (and the Locals in it), watchers, nextID, nextLease
	// and lastSweep.
	mu        sync.Mutex
	hosts     map[string]*Local
	watchers  map[int]func(string, State)
	nextID    int
	nextLease uint64
	lastSweep time.Time
}

// DefaultIdle is how long a Memory keeps a host that holds
// nothing when Memory.Idle is zero.
const DefaultIdle = time.Minute

// CutKeep is how long a Pacer keeps a host whose interval is cut after
// its last cut or response (or its Idle, if longer): not for ever, so
// that a broad crawl's struck hosts do not stay in memory (or Redis)
// once the crawl has moved on.
const CutKeep = 24 * time.Hour

// idle returns m's idle horizon.
func (m *Memory) idle() time.Duration {
	if m.Idle > 0 {
		return m.Idle
	}
	return DefaultIdle
}

func (m *Memory) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// get returns host's state, creating it; m.mu must be held.
func (m *Memory) get(host string, now time.Time) *Local {
	if m.hosts == nil {
		m.hosts = make(map[string]*Local)
		m.lastSweep = now
	}
	if idle := m.idle(); now.Sub(m.lastSweep) >= idle {
		m.sweep(now, idle)
	}
	p := m.hosts[host]
	if p == nil {
		p = new(Local)
		// A copy: the caller's string may share memory with more than
		// the name (the Guard's is inside its host state), which the
		// map would keep alive until a sweep.
		m.hosts[strings.Clone(host)] = p
	}
	return p
}

// sweep forgets the hosts that hold nothing at now and whose last
// response ended at least idle ago (CutKeep after the later of it and the
// last cut, if that is longer, for a cut host). A sweep that drops most hosts copies
// the rest into a new map, since Go maps do not shrink. m.mu must be held.
func (m *Memory) sweep(now time.Time, idle time.Duration) {
	m.lastSweep = now
	before := len(m.hosts)
	for k, p := range m.hosts {
		keep := idle
		if p.interval != 0 {
			keep = max(CutKeep, idle)
		}
		if p.idleFor(now, keep) {
			delete(m.hosts, k)
		}
	}
	if dropped := before - len(m.hosts); dropped > 0 && dropped >= before/2 {
		hosts := make(map[string]*Local, len(m.hosts))
		for k, p := range m.hosts {
			hosts[k] = p
		}
		m.hosts = hosts
	}
}

// Reserve implements Pacer.
func (m *Memory) Reserve(_ context.Context, host string, a Ask) (Slot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	return m.get(host, now).reserve(a, now, &m.nextLease), nil
}

// Release implements Pacer.
func (m *Memory) Release(_ context.Context, host string, r Release) (State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	return m.get(host, now).Release(r, now), nil
}

// Strike implements Pacer.
func (m *Memory) Strike(_ context.Context, host string, s Strike) (State, error) {
	m.mu.Lock()
	now := m.now()
	pc := m.get(host, now).Strike(s, now)
	fns := make([]func(string, State), 0, len(m.watchers))
	for _, fn := range m.watchers {
		fns = append(fns, fn)
	}
	m.mu.Unlock()
	for _, fn := range fns {
		fn(host, pc)
	}
	return pc, nil
}

// Recover implements Pacer.
func (m *Memory) Recover(_ context.Context, host string, interval, floor time.Duration) (State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	return m.get(host, now).Recover(interval, floor, now), nil
}

// Watch implements Pacer.
func (m *Memory) Watch(fn func(host string, p State)) (stop func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.watchers == nil {
		m.watchers = make(map[int]func(string, State))
	}
	id := m.nextID
	m.nextID++
	m.watchers[id] = fn
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.watchers, id)
	}
}
