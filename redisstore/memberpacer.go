package redisstore

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/robotsmw/robotsmw/pace"

	"github.com/redis/go-redis/v9"
)

// A memberPacer is the pace.Pacer that Attach gives a member's Guard:
// the fleet's shared schedule (Fleet.Pacer, in Redis), with what this
// member knows of each host in front of it, so that a page costs the
// schedule about one round trip rather than one per thread per wake-up:
//
//   - A position asked for without a lease (a colly request's OnRequest)
//     is answered here: the request takes its real position in the
//     shared schedule at its gate, with its lease, in one call when the
//     host is free. A position taken there for later is kept here, and
//     the request that asks for a lease once it has come uses it; the
//     positions of one member's requests to one host are interchangeable.
//   - One call at a time per host goes to Redis: the member's other
//     threads waiting for the host wait for its answer, and for as long as
//     it says no lease can be had (the next position, the gap after the
//     last response, the spacing after the last start), they are told so
//     here. While the host's in-flight places are all this member's own,
//     they wait for one of them to be given back, which they hear of here
//     (the Guard wakes them).
//   - A lease given back is recorded here at once and sent, with how long
//     ago the response ended, with the member's next round trip to Redis
//     (the next request's lease, or a page's end and the next pop), or
//     after releaseFlush at the latest: the host's gap runs from the end
//     of the response, as if it had been sent at once. Its response time
//     leaves out any stop of this process meanwhile (stallWatch).
//   - A request given back by a dead member (popped, see popped) asks
//     for its own lease, before the schedule, and the host's other
//     requests here wait for it. One that waits for a queue thread (all
//     of them wait for the host) gets one: the next of the others to ask
//     asks on its behalf (relay), and its thread is free once its
//     request has been sent. A request the dead member had in flight goes
//     before the other requests it held (see reserveScript).
//
// Politeness is kept by Redis either way: a lease is granted only by the
// shared schedule's script, which checks the host's places, its spacing,
// its gap and its pause. What this member knows only ever makes it ask
// later, never sooner.
//
// A memberPacer is safe for concurrent use by multiple goroutines.
type memberPacer struct {
	core *pacer

	// mu guards hosts, rel, flushing, closed and swept.
	mu       sync.Mutex
	hosts    map[string]*hostView
	rel      []pendingRelease
	flushing bool // a flush of rel is armed (releaseFlush)
	closed   bool // the Fleet was closed: no flush is armed any more
	swept    time.Time

	// flushMu is held for the whole of a flush, so that close waits for
	// one a timer started: nothing of the member runs after Fleet.Close.
	flushMu sync.Mutex
}

// releaseFlush bounds how long a lease given back waits for the member's
// next round trip before it is sent on its own.
const releaseFlush = 50 * time.Millisecond

// positionDue is how early a position kept here counts as come: a
// request woken at its position is a little early or late.
const positionDue = 5 * time.Millisecond

// maxViews is how many hosts' views a memberPacer keeps before it drops
// those that hold nothing.
const maxViews = 4096

// A hostView is what a member knows of one host's schedule.
type hostView struct {
	// positions are the positions this member holds in the host's shared
	// schedule (on the member's clock), earliest first; front marks one
	// taken for a request that goes before the schedule (see front).
	positions []heldPosition
	// notBefore is the earliest a lease can be had, from Redis's last
	// answer and the leases given back since; freeAt is the part of it
	// that the host's rules set (its places, spacing and gap), without the
	// position a request took in its schedule, which a request given back
	// by a dead member does not wait for.
	notBefore time.Time
	freeAt    time.Time
	// busy says the host's places were full at the last answer; ours says
	// how many of them this member holds.
	busy bool
	ours int
	// asking is closed when the call to Redis under way for the host
	// ends; nil if none is.
	asking chan struct{}
	// pace is the host's shared state as last seen; ask the last Ask.
	pace pace.State
	ask  pace.Ask
	// lastLease is when this member was last granted a lease.
	lastLease time.Time
	// fronts are the requests given back by a dead member that this
	// member popped, by URL: each asks for its own lease before the
	// schedule, and while one waits for it (up to frontHold since it was
	// popped or last asked), the host's other requests here wait too, so
	// that none of them takes the lease it claims.
	fronts map[string]*frontRequest
	used   time.Time
}

// A frontRequest is a request given back by a dead member that this
// member popped.
type frontRequest struct {
	at time.Time // when it was popped, or last asked
	// until is when it (or a request on its behalf, relay) may ask
	// again, as Redis last told it: its own answer, for the claims it
	// waits for are its own.
	until time.Time
	// started says its colly callbacks run: it has a queue thread. Until
	// then it waits for one, held by the colly queue's loop while every
	// thread is busy (as a rule, waiting for the host): freed says one
	// of the host's other requests here was granted a lease on its
	// behalf (relay), so that its thread is free for it next.
	started, freed bool
}

// A heldPosition is a position this member holds in a host's schedule.
type heldPosition struct {
	at time.Time
}

// frontHold is how long a request given back by a dead member holds the
// host's other requests here back after it was popped or last asked (it
// was deferred, or dropped, if it does not ask again by then).
const frontHold = frontClaim

// frontStart is how long a request given back by a dead member may wait
// for a queue thread before one of its host's other requests here asks
// for its lease on its behalf (relay), to free its thread for it.
const frontStart = 20 * time.Millisecond

// A pendingRelease is a lease given back, not sent to Redis yet.
type pendingRelease struct {
	host string
	r    pace.Release
	at   time.Time // when the response ended
}

func newMemberPacer(core *pacer) *memberPacer {
	return &memberPacer{core: core, hosts: map[string]*hostView{}}
}

// view returns host's view, making it if need be. m.mu must be held.
func (m *memberPacer) view(host string, now time.Time) *hostView {
	v := m.hosts[host]
	if v == nil {
		if len(m.hosts) >= maxViews && now.Sub(m.swept) > time.Second {
			m.sweep(now)
		}
		v = &hostView{}
		m.hosts[host] = v
	}
	v.used = now
	return v
}

// sweep drops the views that hold nothing: no call under way, no lease of
// this member's, no position nor front request, no wait. m.mu must be
// held.
func (m *memberPacer) sweep(now time.Time) {
	m.swept = now
	for host, v := range m.hosts {
		if v.asking == nil && v.ours == 0 && len(v.fronts) == 0 && now.After(v.notBefore) &&
			(len(v.positions) == 0 || now.Sub(v.positions[len(v.positions)-1].at) > time.Minute) {
			delete(m.hosts, host)
		}
	}
}

// paceFor returns the Pace to tell of v: as last seen, or a's floor for a
// host not seen yet.
func (v *hostView) paceFor(a pace.Ask) pace.State {
	pc := v.pace
	pc.Interval = max(pc.Interval, a.Floor)
	return pc
}

// takeDue takes the earliest position that has come, if any.
func (v *hostView) takeDue(now time.Time) (heldPosition, bool) {
	if len(v.positions) == 0 || v.positions[0].at.After(now.Add(positionDue)) {
		return heldPosition{}, false
	}
	p := v.positions[0]
	v.positions = v.positions[1:]
	return p, true
}

// keep records a position at at, in order.
func (v *hostView) keep(p heldPosition) {
	i := len(v.positions)
	for i > 0 && v.positions[i-1].at.After(p.at) {
		i--
	}
	v.positions = append(v.positions, heldPosition{})
	copy(v.positions[i+1:], v.positions[i:])
	v.positions[i] = p
}

// Reserve implements pace.Pacer (see memberPacer).
func (m *memberPacer) Reserve(ctx context.Context, host string, a pace.Ask) (pace.Slot, error) {
	if a.NoLease {
		// The position is taken with the lease, at the gate.
		m.mu.Lock()
		pc := m.view(host, time.Now()).paceFor(a)
		m.mu.Unlock()
		return pace.Slot{Reserved: true, State: pc}, nil
	}
	places := max(a.InFlight, 1)
	for {
		m.mu.Lock()
		now := time.Now()
		v := m.view(host, now)
		v.ask = a
		if ch := v.asking; ch != nil {
			m.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return pace.Slot{}, ctx.Err()
			}
		}
		fu := v.frontKey(a) // "" unless a is a front's ask
		front := fu != ""
		var relay string // the URL this request asks for its lease on behalf of
		held := !front && v.frontWaits(now)
		if held {
			relay = v.needsThread(now)
			held = relay == ""
		}
		until := v.notBefore
		switch {
		case front:
			until = later(v.fronts[fu].until, v.freeAt)
		case relay != "":
			until = later(v.fronts[relay].until, v.freeAt)
		case held:
			// A request given back by a dead member claims the lease:
			// ask again once it may have it (a lease given back here
			// wakes this one sooner).
			until = later(until, now.Add(busyPoll))
		}
		if now.Before(until) && until.Sub(now) <= m.localMax(v) {
			s := pace.Slot{Reserved: true, Wait: until.Sub(now), State: v.paceFor(a)}
			if v.busy || held {
				s.InFlight = max(s.InFlight, places)
			}
			m.mu.Unlock()
			return s, nil
		}
		// A request given back by a dead member asks for its own lease,
		// before the schedule, and so does one that asks on behalf of one
		// waiting for a queue thread (relay); the others use the
		// positions this member took, as they come.
		var positioned bool
		switch {
		case front:
			v.fronts[fu].at = now
		case relay == "":
			_, positioned = v.takeDue(now)
		}
		ch := make(chan struct{})
		v.asking = ch
		rel := m.takeReleases()
		m.mu.Unlock()

		call := a
		call.Positioned = positioned
		s, err := m.reserve(ctx, host, call, front, relay, rel)

		m.mu.Lock()
		v.asking = nil
		close(ch)
		now = time.Now()
		if err == nil && s.Lease == 0 && (front || relay != "") {
			// An answer for the request given back alone: the claims
			// it waits for are not the host's.
			u := relay
			if front {
				u = fu
			}
			if fr := v.fronts[u]; fr != nil {
				fr.until = now.Add(s.Wait)
			}
			v.pace = s.State
		} else if err == nil {
			m.learn(v, s, call, front || relay != "", places, now)
			if s.Lease != 0 {
				if front {
					delete(v.fronts, fu)
				} else if fr := v.fronts[relay]; fr != nil {
					fr.freed = true // this request's thread goes to it next
				}
			}
		}
		m.mu.Unlock()
		return s, err
	}
}

// frontKey returns the key in v.fronts of a's request if a is the ask for
// its lease of a request given back by a dead member that this member
// popped (see memberPacer.front), "" if it is not.
func (v *hostView) frontKey(a pace.Ask) string {
	if len(v.fronts) == 0 || a.URL == nil || a.NoLease {
		return ""
	}
	if k := a.URL.String(); v.fronts[k] != nil {
		return k
	}
	return ""
}

// frontWaits reports whether a request given back by a dead member waits
// for its lease here, and forgets those that stopped asking.
func (v *hostView) frontWaits(now time.Time) bool {
	for u, fr := range v.fronts {
		if now.Sub(fr.at) > frontHold {
			delete(v.fronts, u)
		}
	}
	return len(v.fronts) > 0
}

// needsThread returns the URL of a request given back by a dead member
// that has waited frontStart for a queue thread with none freed for it
// yet, "" if none has. The caller, a request waiting for the host, asks
// for its lease on its behalf (see reserveScript's relay): once that
// request is sent and ends, its thread is free for it.
func (v *hostView) needsThread(now time.Time) string {
	for u, fr := range v.fronts {
		if !fr.started && !fr.freed && now.Sub(fr.at) >= frontStart {
			return u
		}
	}
	return ""
}

// localMax is the longest wait told here rather than by Redis: a
// request told to wait longer than its Guard's MaxWait is deferred, and it
// should then hold a place in the host's schedule (Redis gives it one), so
// that the member's requests keep the order in which they came.
func (m *memberPacer) localMax(v *hostView) time.Duration {
	d := defaultGuardMaxWait
	if g := m.core.f.guard.Load(); g != nil && g.MaxWait > 0 {
		d = g.MaxWait
	}
	if v.busy {
		return max(d, busyPoll) // a busy host's wait is only a bound
	}
	return d
}

// learn records Redis's answer s to call for v at now. m.mu must be held.
func (m *memberPacer) learn(v *hostView, s pace.Slot, call pace.Ask, front bool, places int, now time.Time) {
	v.pace = s.State
	switch {
	case s.Lease != 0:
		v.lastLease = now
		v.ours++
		v.busy = s.InFlight >= places
		wait := s.Interval
		if v.busy {
			// No place comes free before a response ends, and the gap
			// after it: as Redis reckons it for a busy host. The one
			// given back here wakes the waiters sooner (Release).
			est := busyPoll
			if s.Latency > 0 {
				est = s.Latency + pace.EndGap(call.Gap, s.Latency, call.Latency)
			}
			wait = max(wait, est)
		}
		v.notBefore = now.Add(wait)
		v.freeAt = v.notBefore
	case s.Reserved:
		// A position taken now (call was not positioned) or kept: the
		// request asks again with it once the wait is over. A request
		// given back by a dead member holds none: it asks again itself.
		if !front {
			v.keep(heldPosition{at: now.Add(s.Wait)})
		}
		v.busy = s.InFlight >= places
		v.notBefore = now.Add(s.Wait)
		if call.Positioned || front || v.busy {
			v.freeAt = v.notBefore // a wait for the host's rules
		}
	}
}

// reserve asks Redis for call (front, or on behalf of relay: see
// reserveScript), with the leases given back in rel before it in one
// round trip.
func (m *memberPacer) reserve(ctx context.Context, host string, a pace.Ask, front bool, relay string, rel []pendingRelease) (pace.Slot, error) {
	p := m.core
	args := p.reserveArgs(a, front || relay != "", relay)
	if len(rel) == 0 {
		v, err := reserveScript.Run(ctx, p.f.client, p.key(host), args...).Result()
		return p.reserved(ctx, host, a, v, err)
	}
	calls := m.releaseCalls(rel)
	calls = append(calls, call{script: reserveScript, keys: p.key(host), args: args})
	cmds, err := p.f.pipe(ctx, calls)
	m.releasedAll(rel, cmds, err)
	if len(cmds) != len(calls) || !answered(cmds[len(cmds)-1:]) {
		if len(cmds) == len(calls) && cmds[len(cmds)-1].Err() != nil {
			err = cmds[len(cmds)-1].Err()
		}
		if err == nil {
			err = errors.New("redisstore: no reply from Redis")
		}
		return p.reserved(ctx, host, a, nil, err)
	}
	return p.reserved(ctx, host, a, cmds[len(cmds)-1].Val(), nil)
}

// Release implements pace.Pacer: the lease is given back here at once
// and sent to Redis with the member's next round trip (see memberPacer).
func (m *memberPacer) Release(ctx context.Context, host string, r pace.Release) (pace.State, error) {
	if r.Lease != 0 {
		m.core.unhold(host, r.Lease)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	v := m.view(host, now)
	if r.Lease != 0 && v.ours > 0 {
		v.ours--
	}
	v.busy = false
	free := v.lastLease.Add(max(v.pace.Interval, r.Floor))
	if !r.Unsent {
		// A stop of this process is not the host's response time.
		r.Latency = m.core.f.stalls.unstalled(r.Latency, now)
		v.pace.Latency = pace.SmoothLatency(v.pace.Latency, r.Latency, r.Failed)
		free = later(free, now.Add(pace.EndGap(v.ask.Gap, v.pace.Latency, v.ask.Latency)))
	}
	v.notBefore, v.freeAt = free, free
	m.rel = append(m.rel, pendingRelease{host: host, r: r, at: now})
	if !m.flushing && !m.closed {
		m.flushing = true
		time.AfterFunc(releaseFlush, m.flush)
	}
	pc := v.pace
	pc.Interval = max(pc.Interval, r.Floor)
	pc.InFlight = max(pc.InFlight-1, 0)
	return pc, nil
}

// takeReleases returns the leases given back and not sent yet, which the
// caller sends. m.mu must be held.
func (m *memberPacer) takeReleases() []pendingRelease {
	rel := m.rel
	m.rel = nil
	return rel
}

// pending returns the leases given back and not sent yet, for a round
// trip of the frontier to carry.
func (m *memberPacer) pending() []pendingRelease {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.takeReleases()
}

// flush sends the leases given back that no round trip carried; after
// close, a flush a timer started does nothing.
func (m *memberPacer) flush() { m.flushLeases(false) }

// flushLeases is flush; final is close's, which runs once it is closed.
func (m *memberPacer) flushLeases(final bool) {
	m.flushMu.Lock()
	defer m.flushMu.Unlock()
	m.mu.Lock()
	m.flushing = false
	if m.closed && !final {
		m.mu.Unlock()
		return
	}
	rel := m.takeReleases()
	m.mu.Unlock()
	if len(rel) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), beatTimeout)
	defer cancel()
	cmds, err := m.core.f.pipe(ctx, m.releaseCalls(rel))
	m.releasedAll(rel, cmds, err)
}

// releaseCalls returns the calls that send rel.
func (m *memberPacer) releaseCalls(rel []pendingRelease) []call {
	now := time.Now()
	calls := make([]call, len(rel))
	for i, r := range rel {
		calls[i] = call{script: leaseReleaseScript, keys: m.core.key(r.host), args: m.core.releaseArgs(r.r, now.Sub(r.at))}
	}
	return calls
}

// releasedAll records the outcome of sending rel: a lease whose release
// did not reach Redis runs out there.
//
// A release that did not reach Redis because Redis could not be reached
// waits for the next round trip again, with when its response ended, so
// that the host's place is not held until the lease runs out.
func (m *memberPacer) releasedAll(rel []pendingRelease, cmds []*redis.Cmd, err error) {
	var again []pendingRelease
	for i, r := range rel {
		var v any
		e := err
		if i < len(cmds) && answered(cmds[i:i+1]) {
			v, e = cmds[i].Val(), nil
		} else if i < len(cmds) && cmds[i].Err() != nil {
			e = cmds[i].Err()
		}
		if isDown(e) && time.Since(r.at) < m.core.f.memberTTL() {
			again = append(again, r)
			continue
		}
		m.core.released(context.Background(), r.host, r.r, v, e)
	}
	if len(again) == 0 {
		return
	}
	m.core.f.seen(err)
	m.mu.Lock()
	m.rel = append(again, m.rel...)
	if !m.flushing && !m.closed {
		m.flushing = true
		time.AfterFunc(time.Second, m.flush)
	}
	m.mu.Unlock()
}

// Strike implements pace.Pacer: the positions this member holds in
// the host's schedule are void (a pause voids the schedule).
func (m *memberPacer) Strike(ctx context.Context, host string, s pace.Strike) (pace.State, error) {
	m.void(host)
	return m.core.Strike(ctx, host, s)
}

// void drops the positions held in host's schedule.
func (m *memberPacer) void(host string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v := m.hosts[host]; v != nil {
		v.positions = nil
	}
}

// Recover implements pace.Pacer.
func (m *memberPacer) Recover(ctx context.Context, host string, interval, floor time.Duration) (pace.State, error) {
	return m.core.Recover(ctx, host, interval, floor)
}

// Watch implements pace.Pacer: a pause another member reports voids
// this member's positions too. fn is also called with a zero State to
// wake the requests waiting for a host (see memberPacer.popped).
func (m *memberPacer) Watch(fn func(host string, pc pace.State)) (stop func()) {
	return m.core.Watch(func(host string, pc pace.State) {
		if pc.Paused > 0 {
			m.void(host)
		}
		fn(host, pc)
	})
}

// wake has the requests waiting for host ask again, if the request to u
// given back by a dead member still waits for a queue thread.
func (m *memberPacer) wake(host, u string) {
	m.mu.Lock()
	v := m.hosts[host]
	waits := v != nil && v.fronts[u] != nil && !v.fronts[u].started
	m.mu.Unlock()
	if waits {
		m.core.tell(host, pace.State{})
	}
}

// popped records that this member popped the request to u given back by
// a dead member: it goes before the host's schedule, and the host's other
// requests here wait for it. If it finds no queue thread within
// frontStart (every one waits for the host), they are woken, and the
// first to ask gives its thread up for it.
func (m *memberPacer) popped(u *url.URL) {
	m.mu.Lock()
	defer m.mu.Unlock()
	host, key, now := frontHost(u), u.String(), time.Now()
	*m.frontFor(host, key, now) = frontRequest{at: now}
	time.AfterFunc(frontStart, func() { m.wake(host, key) })
}

// front records that the request to u given back by a dead member is
// about to ask for its lease: its OnRequest ran (see popped).
func (m *memberPacer) front(u *url.URL) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	fr := m.frontFor(frontHost(u), u.String(), now)
	fr.at, fr.started = now, true
}

// frontFor returns the record of the request given back by a dead member
// to host under key (its URL), made if need be. m.mu must be held.
func (m *memberPacer) frontFor(host, key string, now time.Time) *frontRequest {
	v := m.view(host, now)
	if v.fronts == nil {
		v.fronts = map[string]*frontRequest{}
	}
	fr := v.fronts[key]
	if fr == nil {
		fr = &frontRequest{}
		v.fronts[key] = fr
	}
	return fr
}

// frontHost returns the name the Guard gives u's host when it asks for
// its lease (the host's key in m.hosts): lower case, without a trailing
// dot. colly's URLs have internationalised names in punycode already.
func frontHost(u *url.URL) string {
	return strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
}

// close sends the leases given back that wait.
// close sends the leases given back that are still pending, once any
// flush a timer started has ended, and arms no flush after it: nothing of
// the member (its OnDown, say) runs after Fleet.Close returns.
func (m *memberPacer) close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.flushLeases(true)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// defaultGuardMaxWait is a Guard's MaxWait when the field is zero, as
// Guard.MaxWait documents it.
const defaultGuardMaxWait = 30 * time.Second
