package pace

import (
	"math"
	"time"
)

// A Local is one host's schedule, kept by its caller under the caller's
// own lock: what a [Memory] keeps per host, for a caller that paces the
// host alone (a Guard with no Pacer keeps one in each host's state, so
// that a request reads and writes its host's schedule with the lock it
// holds for the host already, and no Memory's lock is shared by every
// host). Its methods keep the rules of [Pacer]'s (Reserve, Release,
// Strike, Recover) on the time the caller passes. Its caller decides when
// to forget it; [Local.Holds] says whether that would lose anything due
// (a cut interval and the smoothed response time are the caller's to
// weigh).
//
// The zero Local is a host first seen. A Local is not safe for
// concurrent use, and must not be copied after first use (its first lease
// is kept in an array of its own).
type Local struct {
	// The times are stamps (see stamp), 0 for never: a Local is read
	// cold, one per host, and its 112 octets fit in two cache lines so.
	tat        stamp // the next free position
	pauseUntil stamp
	lastCut    stamp         // when the interval was last cut
	lastStart  stamp         // when the last lease was granted or renewed
	lastEnd    stamp         // when the last response ended
	interval   time.Duration // the cut interval; 0 when not cut
	latency    time.Duration // smoothed response time; 0 when unknown
	leases     []lease       // requests in flight: lease1, or more
	// nextLease is the last lease given, for a Local used alone. It
	// starts at the time of the first, in nanoseconds, so that a Local
	// made for a host again later does not number its leases as the one
	// before did: a lease of that one given back late matches none.
	nextLease uint64
	// lease1 is leases' first array: a host has one request in flight as
	// a rule, whose lease is then read with the rest of the schedule.
	lease1 [1]lease
}

// A stamp is a time as a Local keeps it: the time since stampOrigin in
// nanoseconds, plus stampBias, so that the zero stamp (a Local's zero
// value: never) comes before any clock a caller passes. A time with a
// monotonic clock reading (time.Now's) is counted on that clock, so that
// a step of the wall clock does not stall a host nor crowd its requests.
// Stamps run from about 73 years before the process started to 219 years
// after; times beyond are held at those ends.
type stamp int64

// stampBias is what a stamp adds to the time since stampOrigin: about 73
// years.
const stampBias = 1 << 61

// stampOrigin is the origin of stamps: the time the package was
// initialised, read once, never changed.
var stampOrigin = time.Now()

// stampOf returns t's stamp, never 0.
func stampOf(t time.Time) stamp {
	d := t.Sub(stampOrigin) // saturates at ±292 years
	if d < -stampBias+1 {
		return 1
	}
	if d > math.MaxInt64-stampBias {
		return math.MaxInt64
	}
	return stamp(d + stampBias)
}

// add returns s moved on by d, at most to the last stamp (as
// time.Time.Add holds a pause of the largest time.Duration).
func (s stamp) add(d time.Duration) stamp {
	r := s + stamp(d)
	switch {
	case d > 0 && r < s:
		return math.MaxInt64
	case d < 0 && r > s:
		return math.MinInt64
	}
	return r
}

// sub returns the time from u to s, within time.Duration's range (as
// time.Time.Sub).
func (s stamp) sub(u stamp) time.Duration {
	d := s - u
	if (s^u) < 0 && (d^s) < 0 { // overflow
		if s < u {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	return time.Duration(d)
}

// A lease is one request in flight.
type lease struct {
	id      uint64
	start   stamp
	expires stamp
}

// Reserve is [Pacer.Reserve] for l's host at now.
func (l *Local) Reserve(a Ask, now time.Time) Slot {
	if l.nextLease == 0 {
		l.nextLease = uint64(now.UnixNano())
	}
	return l.reserve(a, now, &l.nextLease)
}

// reserve is Reserve, numbering a lease it grants after *last.
func (l *Local) reserve(a Ask, t time.Time, last *uint64) Slot {
	now := stampOf(t)
	l.expire(now)
	pc := l.state(now, a.Floor)
	gap := EndGap(a.Gap, l.latency, a.Latency)
	if !a.Positioned {
		at := max(l.tat, now, l.pauseUntil)
		wait := at.sub(now)
		if wait > a.Limit {
			return Slot{Wait: wait, State: pc}
		}
		l.tat = at.add(spacing(pc.Interval, l.latency, gap, a.InFlight))
		if wait > 0 || a.NoLease {
			return Slot{Reserved: true, Wait: wait, State: pc}
		}
	} else if now < l.pauseUntil {
		// A pause voids the position.
		return Slot{Wait: l.pauseUntil.sub(now), State: pc}
	} else if a.NoLease {
		return Slot{Reserved: true, State: pc}
	}
	// The request has its position, now: the lease, if the host is free.
	if len(l.leases) >= max(a.InFlight, 1) {
		busy := l.lastStart
		for _, s := range l.leases {
			busy = max(busy, s.start)
		}
		est := busy.add(l.latency).add(gap).sub(now)
		if l.latency == 0 {
			est = max(pc.Interval, busyPoll)
		}
		return Slot{Reserved: true, Wait: max(est, minBusyWait), State: pc}
	}
	free := now // the zero stamps are never: no spacing from them
	if l.lastStart != 0 {
		free = max(free, l.lastStart.add(pc.Interval))
	}
	if l.lastEnd != 0 {
		free = max(free, l.lastEnd.add(gap))
	}
	if free > now {
		return Slot{Reserved: true, Wait: free.sub(now), State: pc}
	}
	*last++
	if l.leases == nil {
		l.leases = l.lease1[:0]
	}
	l.leases = append(l.leases, lease{id: *last, start: now, expires: now.add(leaseTTL(a.Lease))})
	l.lastStart = max(l.lastStart, now) // now may have been read before the caller's lock
	pc.InFlight++
	return Slot{Reserved: true, Lease: *last, LeaseTTL: leaseTTL(a.Lease), State: pc}
}

// Release is [Pacer.Release] for l's host at now.
func (l *Local) Release(r Release, t time.Time) State {
	now := stampOf(t)
	l.expire(now)
	for i := range l.leases {
		if l.leases[i].id == r.Lease {
			l.leases[i] = l.leases[len(l.leases)-1]
			l.leases = l.leases[:len(l.leases)-1]
			break
		}
	}
	if !r.Unsent {
		l.lastEnd = max(l.lastEnd, now)
		l.latency = SmoothLatency(l.latency, r.Latency, r.Failed)
	}
	return l.state(now, r.Floor)
}

// Strike is [Pacer.Strike] for l's host at now.
func (l *Local) Strike(s Strike, t time.Time) State {
	now := stampOf(t)
	l.expire(now)
	incident := now >= l.pauseUntil
	if end := now.add(s.Pause); end > l.pauseUntil {
		l.pauseUntil = end
	}
	iv := max(l.interval, s.Floor)
	if incident && s.Factor > 1 && (l.lastCut == 0 || now.sub(l.lastCut) >= iv) {
		from := iv
		if from == 0 {
			from = s.From
		}
		l.interval = min(time.Duration(float64(from)*s.Factor), max(s.Ceiling, s.Floor))
		l.lastCut = now
	}
	if now < l.pauseUntil {
		// The schedule restarts at the pause's end: positions taken
		// before are void (their holders were woken, or ask again).
		l.tat = l.pauseUntil
	}
	return l.state(now, s.Floor)
}

// Recover is [Pacer.Recover] for l's host at now.
func (l *Local) Recover(interval, floor time.Duration, t time.Time) State {
	now := stampOf(t)
	l.expire(now)
	if now < l.pauseUntil || l.lastCut != 0 && now.sub(l.lastCut) < max(l.interval, floor) {
		// Paused, or cut less than an interval ago: a step computed
		// before that cut must not undo it.
		return l.state(now, floor)
	}
	if interval < l.interval {
		l.interval = interval
	}
	if l.interval <= floor {
		l.interval = 0
	}
	return l.state(now, floor)
}

// Holds reports whether l holds anything still due at now: a lease, a
// position ahead or a pause. A cut interval is not counted: forgetting a
// cut host is the caller's decision (a Memory keeps one for CutKeep).
func (l *Local) Holds(t time.Time) bool {
	now := stampOf(t)
	l.expire(now)
	return len(l.leases) > 0 || now < l.tat || now < l.pauseUntil
}

// idleFor reports whether l holds nothing at now and its last response
// ended, and its last cut was, at least keep ago (see Memory.sweep).
func (l *Local) idleFor(t time.Time, keep time.Duration) bool {
	now := stampOf(t)
	l.expire(now)
	last := max(l.lastEnd, l.lastCut)
	return len(l.leases) == 0 && now >= l.tat && now >= l.pauseUntil && (last == 0 || now.sub(last) >= keep)
}

// expire drops the leases that ran out at now (their member died, or a
// request never reported its end).
func (l *Local) expire(now stamp) {
	for i := 0; i < len(l.leases); {
		if now >= l.leases[i].expires {
			l.leases[i] = l.leases[len(l.leases)-1]
			l.leases = l.leases[:len(l.leases)-1]
			continue
		}
		i++
	}
}

// state returns l's State at now for floor.
func (l *Local) state(now stamp, floor time.Duration) State {
	return State{
		Interval: max(l.interval, floor),
		Paused:   max(l.pauseUntil.sub(now), 0),
		Latency:  l.latency,
		InFlight: len(l.leases),
	}
}
