package robotsmw

import (
	"context"
	"sync"
	"time"
)

// A MemoryPacer is a [Pacer] in memory: the Guards of one process that
// share it pace each host as one (several collectors with Guards of their
// own, say). It is also the reference for what a Pacer does; package
// redisstore does the same over Redis, for a fleet of processes.
//
// The zero MemoryPacer is ready to use. It is safe for concurrent use by
// multiple goroutines. A host's state is forgotten once it holds nothing:
// its schedule and pause are past and its interval is not cut.
type MemoryPacer struct {
	// Now returns the current time. If nil, time.Now is used.
	Now func() time.Time

	// mu guards hosts, watchers, nextID and lastSweep.
	mu        sync.Mutex
	hosts     map[string]*pace
	watchers  map[int]func(string, Pace)
	nextID    int
	lastSweep time.Time
}

// pace is one host's state in a MemoryPacer.
type pace struct {
	tat        time.Time     // the next free slot
	interval   time.Duration // the cut interval; 0 when not cut
	pauseUntil time.Time
	lastCut    time.Time
}

// memoryPacerSweep is how often a MemoryPacer looks for hosts to forget.
const memoryPacerSweep = time.Minute

func (m *MemoryPacer) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// get returns host's state, creating it; m.mu must be held.
func (m *MemoryPacer) get(host string, now time.Time) *pace {
	if m.hosts == nil {
		m.hosts = make(map[string]*pace)
		m.lastSweep = now
	}
	if now.Sub(m.lastSweep) >= memoryPacerSweep {
		m.lastSweep = now
		for k, p := range m.hosts {
			if p.interval == 0 && !now.Before(p.tat) && !now.Before(p.pauseUntil) {
				delete(m.hosts, k)
			}
		}
	}
	p := m.hosts[host]
	if p == nil {
		p = &pace{tat: now}
		m.hosts[host] = p
	}
	return p
}

// state returns p's Pace at now for floor.
func (p *pace) state(now time.Time, floor time.Duration) Pace {
	return Pace{Interval: max(p.interval, floor), Paused: max(p.pauseUntil.Sub(now), 0)}
}

// Reserve implements Pacer.
func (m *MemoryPacer) Reserve(_ context.Context, host string, floor, limit time.Duration) (Slot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	p := m.get(host, now)
	at := p.tat
	if at.Before(now) {
		at = now
	}
	if at.Before(p.pauseUntil) {
		at = p.pauseUntil
	}
	s := Slot{Wait: at.Sub(now), Pace: p.state(now, floor)}
	if s.Wait > limit {
		return s, nil
	}
	s.Reserved = true
	p.tat = at.Add(s.Interval)
	return s, nil
}

// Strike implements Pacer.
func (m *MemoryPacer) Strike(_ context.Context, host string, s Strike) (Pace, error) {
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
	if p.tat.Before(p.pauseUntil) {
		p.tat = p.pauseUntil // slots before the pause's end are void
	}
	pc := p.state(now, s.Floor)
	fns := make([]func(string, Pace), 0, len(m.watchers))
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
func (m *MemoryPacer) Recover(_ context.Context, host string, interval, floor time.Duration) (Pace, error) {
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
func (m *MemoryPacer) Watch(fn func(host string, p Pace)) (stop func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.watchers == nil {
		m.watchers = make(map[int]func(string, Pace))
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
