package pace

import (
	"context"
	"strings"
	"sync"
	"time"
)

// A Memory is a [Pacer] in memory. It is the home of a Guard's
// schedule when Guard.Pacer is nil (each Guard then has its own), and the
// Guards of one process that share one Memory pace each host as one (several
// collectors with Guards of their own, say). It is also the reference for
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

	// mu guards hosts, watchers, nextID, nextLease and lastSweep.
	mu        sync.Mutex
	hosts     map[string]*hostState
	watchers  map[int]func(string, State)
	nextID    int
	nextLease uint64
	lastSweep time.Time
}

// hostState is one host's state in a Memory.
type hostState struct {
	tat        time.Time     // the next free position
	interval   time.Duration // the cut interval; 0 when not cut
	pauseUntil time.Time
	lastCut    time.Time
	lastStart  time.Time     // when the last lease was granted or renewed
	lastEnd    time.Time     // when the last response ended
	latency    time.Duration // smoothed response time; 0 when unknown
	leases     []lease       // requests in flight
	gone       bool          // forgotten by a sweep: a hint to it is stale
}

// A lease is one request in flight.
type lease struct {
	id      uint64
	start   time.Time
	expires time.Time
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
func (m *Memory) get(host string, now time.Time) *hostState {
	if m.hosts == nil {
		m.hosts = make(map[string]*hostState)
		m.lastSweep = now
	}
	if idle := m.idle(); now.Sub(m.lastSweep) >= idle {
		m.sweep(now, idle)
	}
	p := m.hosts[host]
	if p == nil {
		p = &hostState{tat: now}
		// A copy: the caller's string may share memory with more than
		// the name (the Guard's is inside its host state), which the
		// map would keep alive until a sweep.
		m.hosts[strings.Clone(host)] = p
	}
	p.expire(now)
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
		p.expire(now)
		keep := idle
		if p.interval != 0 {
			keep = max(CutKeep, idle)
		}
		if len(p.leases) == 0 && !now.Before(p.tat) && !now.Before(p.pauseUntil) &&
			now.Sub(maxTime(p.lastEnd, p.lastCut)) >= keep {
			delete(m.hosts, k)
			p.gone = true
		}
	}
	if dropped := before - len(m.hosts); dropped > 0 && dropped >= before/2 {
		hosts := make(map[string]*hostState, len(m.hosts))
		for k, p := range m.hosts {
			hosts[k] = p
		}
		m.hosts = hosts
	}
}

// A Hint remembers where a Memory keeps one host's state, for a caller
// that asks about the same host again and again (a Guard keeps one per
// host it paces): [Memory.ReserveHint] and [Memory.ReleaseHint] then skip
// the look-up by name while the state is not forgotten. The zero Hint is
// empty. A Hint belongs to one Memory and one host; it is read and
// written only with that Memory's lock held, so it needs no lock of its
// own.
type Hint struct{ p *hostState }

// hinted is get for a caller that keeps, in hint, the state it was last
// given for host: while that state is not forgotten and no sweep is due,
// it is used without a look-up in the map. m.mu is held; a nil hint means
// none.
func (m *Memory) hinted(host string, now time.Time, hint *Hint) *hostState {
	if hint == nil {
		return m.get(host, now)
	}
	if p := hint.p; p != nil && !p.gone && now.Sub(m.lastSweep) < m.idle() {
		p.expire(now)
		return p
	}
	p := m.get(host, now)
	hint.p = p
	return p
}

// expire drops the leases that ran out at now (their member died, or a
// request never reported its end).
func (p *hostState) expire(now time.Time) {
	for i := 0; i < len(p.leases); {
		if !now.Before(p.leases[i].expires) {
			p.leases[i] = p.leases[len(p.leases)-1]
			p.leases = p.leases[:len(p.leases)-1]
			continue
		}
		i++
	}
}

// state returns p's State at now for floor.
func (p *hostState) state(now time.Time, floor time.Duration) State {
	return State{
		Interval: max(p.interval, floor),
		Paused:   max(p.pauseUntil.Sub(now), 0),
		Latency:  p.latency,
		InFlight: len(p.leases),
	}
}

// find returns the index of lease id, or -1.
func (p *hostState) find(id uint64) int {
	for i := range p.leases {
		if p.leases[i].id == id {
			return i
		}
	}
	return -1
}

// Reserve implements Pacer.
func (m *Memory) Reserve(_ context.Context, host string, a Ask) (Slot, error) {
	return m.ReserveHint(host, a, nil, time.Time{})
}

// ReserveHint is Reserve with a [Hint] for host (nil: none), at now on m's
// clock (zero: m reads its clock). It never fails.
func (m *Memory) ReserveHint(host string, a Ask, hint *Hint, now time.Time) (Slot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if now.IsZero() {
		now = m.now()
	}
	p := m.hinted(host, now, hint)
	pc := p.state(now, a.Floor)
	gap := EndGap(a.Gap, p.latency, a.Latency)
	if !a.Positioned {
		at := maxTime(p.tat, now, p.pauseUntil)
		wait := at.Sub(now)
		if wait > a.Limit {
			return Slot{Wait: wait, State: pc}, nil
		}
		p.tat = at.Add(spacing(pc.Interval, p.latency, gap, a.InFlight))
		if wait > 0 || a.NoLease {
			return Slot{Reserved: true, Wait: wait, State: pc}, nil
		}
	} else if now.Before(p.pauseUntil) {
		// A pause voids the position.
		return Slot{Wait: p.pauseUntil.Sub(now), State: pc}, nil
	} else if a.NoLease {
		return Slot{Reserved: true, State: pc}, nil
	}
	// The request has its position, now: the lease, if the host is free.
	if len(p.leases) >= max(a.InFlight, 1) {
		busy := p.lastStart
		for _, l := range p.leases {
			busy = maxTime(busy, l.start)
		}
		est := busy.Add(p.latency).Add(gap).Sub(now)
		if p.latency == 0 {
			est = max(pc.Interval, busyPoll)
		}
		return Slot{Reserved: true, Wait: max(est, minBusyWait), State: pc}, nil
	}
	free := maxTime(p.lastStart.Add(pc.Interval), p.lastEnd.Add(gap))
	if free.After(now) {
		return Slot{Reserved: true, Wait: free.Sub(now), State: pc}, nil
	}
	m.nextLease++
	p.leases = append(p.leases, lease{id: m.nextLease, start: now, expires: now.Add(leaseTTL(a.Lease))})
	p.lastStart = maxTime(p.lastStart, now) // now may have been read before m.mu
	pc.InFlight++
	return Slot{Reserved: true, Lease: m.nextLease, LeaseTTL: leaseTTL(a.Lease), State: pc}, nil
}

// Release implements Pacer.
func (m *Memory) Release(_ context.Context, host string, r Release) (State, error) {
	return m.ReleaseHint(host, r, nil, time.Time{})
}

// ReleaseHint is Release with a [Hint] for host (nil: none), at now on m's
// clock (zero: m reads its clock). It never fails.
func (m *Memory) ReleaseHint(host string, r Release, hint *Hint, now time.Time) (State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if now.IsZero() {
		now = m.now()
	}
	p := m.hinted(host, now, hint)
	if i := p.find(r.Lease); i >= 0 {
		p.leases[i] = p.leases[len(p.leases)-1]
		p.leases = p.leases[:len(p.leases)-1]
	}
	if !r.Unsent {
		p.lastEnd = maxTime(p.lastEnd, now)
		p.latency = SmoothLatency(p.latency, r.Latency, r.Failed)
	}
	return p.state(now, r.Floor), nil
}

// Strike implements Pacer.
func (m *Memory) Strike(_ context.Context, host string, s Strike) (State, error) {
	m.mu.Lock()
	now := m.now()
	p := m.get(host, now)
	incident := !now.Before(p.pauseUntil)
	if end := now.Add(s.Pause); end.After(p.pauseUntil) {
		p.pauseUntil = end
	}
	iv := max(p.interval, s.Floor)
	if incident && s.Factor > 1 && (p.lastCut.IsZero() || now.Sub(p.lastCut) >= iv) {
		from := iv
		if from == 0 {
			from = s.From
		}
		p.interval = min(time.Duration(float64(from)*s.Factor), max(s.Ceiling, s.Floor))
		p.lastCut = now
	}
	if now.Before(p.pauseUntil) {
		// The schedule restarts at the pause's end: positions taken
		// before are void (their holders were woken, or ask again).
		p.tat = p.pauseUntil
	}
	pc := p.state(now, s.Floor)
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
	p := m.get(host, now)
	if now.Before(p.pauseUntil) || now.Sub(p.lastCut) < max(p.interval, floor) {
		// Paused, or cut less than an interval ago: a step computed
		// before that cut must not undo it.
		return p.state(now, floor), nil
	}
	if interval < p.interval {
		p.interval = interval
	}
	if p.interval <= floor {
		p.interval = 0
	}
	return p.state(now, floor), nil
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

func maxTime(t time.Time, ts ...time.Time) time.Time {
	for _, u := range ts {
		if u.After(t) {
			t = u
		}
	}
	return t
}
