package pace

import "time"

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
	tat        time.Time     // the next free position
	interval   time.Duration // the cut interval; 0 when not cut
	pauseUntil time.Time
	lastCut    time.Time
	lastStart  time.Time     // when the last lease was granted or renewed
	lastEnd    time.Time     // when the last response ended
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

// A lease is one request in flight.
type lease struct {
	id      uint64
	start   time.Time
	expires time.Time
}

// Reserve is [Pacer.Reserve] for l's host at now.
func (l *Local) Reserve(a Ask, now time.Time) Slot {
	if l.nextLease == 0 {
		l.nextLease = uint64(now.UnixNano())
	}
	return l.reserve(a, now, &l.nextLease)
}

// reserve is Reserve, numbering a lease it grants after *last.
func (l *Local) reserve(a Ask, now time.Time, last *uint64) Slot {
	l.expire(now)
	pc := l.state(now, a.Floor)
	gap := EndGap(a.Gap, l.latency, a.Latency)
	if !a.Positioned {
		at := maxTime(l.tat, now, l.pauseUntil)
		wait := at.Sub(now)
		if wait > a.Limit {
			return Slot{Wait: wait, State: pc}
		}
		l.tat = at.Add(spacing(pc.Interval, l.latency, gap, a.InFlight))
		if wait > 0 || a.NoLease {
			return Slot{Reserved: true, Wait: wait, State: pc}
		}
	} else if now.Before(l.pauseUntil) {
		// A pause voids the position.
		return Slot{Wait: l.pauseUntil.Sub(now), State: pc}
	} else if a.NoLease {
		return Slot{Reserved: true, State: pc}
	}
	// The request has its position, now: the lease, if the host is free.
	if len(l.leases) >= max(a.InFlight, 1) {
		busy := l.lastStart
		for _, s := range l.leases {
			busy = maxTime(busy, s.start)
		}
		est := busy.Add(l.latency).Add(gap).Sub(now)
		if l.latency == 0 {
			est = max(pc.Interval, busyPoll)
		}
		return Slot{Reserved: true, Wait: max(est, minBusyWait), State: pc}
	}
	free := maxTime(l.lastStart.Add(pc.Interval), l.lastEnd.Add(gap))
	if free.After(now) {
		return Slot{Reserved: true, Wait: free.Sub(now), State: pc}
	}
	*last++
	if l.leases == nil {
		l.leases = l.lease1[:0]
	}
	l.leases = append(l.leases, lease{id: *last, start: now, expires: now.Add(leaseTTL(a.Lease))})
	l.lastStart = maxTime(l.lastStart, now) // now may have been read before the caller's lock
	pc.InFlight++
	return Slot{Reserved: true, Lease: *last, LeaseTTL: leaseTTL(a.Lease), State: pc}
}

// Release is [Pacer.Release] for l's host at now.
func (l *Local) Release(r Release, now time.Time) State {
	l.expire(now)
	for i := range l.leases {
		if l.leases[i].id == r.Lease {
			l.leases[i] = l.leases[len(l.leases)-1]
			l.leases = l.leases[:len(l.leases)-1]
			break
		}
	}
	if !r.Unsent {
		l.lastEnd = maxTime(l.lastEnd, now)
		l.latency = SmoothLatency(l.latency, r.Latency, r.Failed)
	}
	return l.state(now, r.Floor)
}

// Strike is [Pacer.Strike] for l's host at now.
func (l *Local) Strike(s Strike, now time.Time) State {
	l.expire(now)
	incident := !now.Before(l.pauseUntil)
	if end := now.Add(s.Pause); end.After(l.pauseUntil) {
		l.pauseUntil = end
	}
	iv := max(l.interval, s.Floor)
	if incident && s.Factor > 1 && (l.lastCut.IsZero() || now.Sub(l.lastCut) >= iv) {
		from := iv
		if from == 0 {
			from = s.From
		}
		l.interval = min(time.Duration(float64(from)*s.Factor), max(s.Ceiling, s.Floor))
		l.lastCut = now
	}
	if now.Before(l.pauseUntil) {
		// The schedule restarts at the pause's end: positions taken
		// before are void (their holders were woken, or ask again).
		l.tat = l.pauseUntil
	}
	return l.state(now, s.Floor)
}

// Recover is [Pacer.Recover] for l's host at now.
func (l *Local) Recover(interval, floor time.Duration, now time.Time) State {
	l.expire(now)
	if now.Before(l.pauseUntil) || now.Sub(l.lastCut) < max(l.interval, floor) {
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
func (l *Local) Holds(now time.Time) bool {
	l.expire(now)
	return len(l.leases) > 0 || now.Before(l.tat) || now.Before(l.pauseUntil)
}

// expire drops the leases that ran out at now (their member died, or a
// request never reported its end).
func (l *Local) expire(now time.Time) {
	for i := 0; i < len(l.leases); {
		if !now.Before(l.leases[i].expires) {
			l.leases[i] = l.leases[len(l.leases)-1]
			l.leases = l.leases[:len(l.leases)-1]
			continue
		}
		i++
	}
}

// state returns l's State at now for floor.
func (l *Local) state(now time.Time, floor time.Duration) State {
	return State{
		Interval: max(l.interval, floor),
		Paused:   max(l.pauseUntil.Sub(now), 0),
		Latency:  l.latency,
		InFlight: len(l.leases),
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
