package redisstore

import (
	"sync"
	"time"
)

// A stallWatch notices when this process did not run for a while: it was
// stopped (SIGSTOP, a debugger), its machine was suspended, or it was
// starved of CPU. A response that spanned such a stall did not take that
// long at its host: the time the process was not running is taken off
// the response time a member gives back with a lease (memberPacer's
// Release), so that the host's smoothed response time, which spaces the
// whole fleet's requests to it (see docs/fleet.md), does not grow with a
// member's stop.
//
// A stallWatch is safe for concurrent use by multiple goroutines.
type stallWatch struct {
	// mu guards stalls, next and last.
	mu     sync.Mutex
	stalls [stallsKept]stall // the latest ones, a ring
	next   int
	last   time.Time // the last look; zero while not watching
}

// A stall is a time the process did not run.
type stall struct{ from, to time.Time }

const (
	// stallTick is how often the watch looks at the clock.
	stallTick = 100 * time.Millisecond
	// stallMin is how much later than due a look must come to count as
	// a stall: less is scheduling noise.
	stallMin = 500 * time.Millisecond
	// stallsKept is how many stalls are kept: a response spans few.
	stallsKept = 4
)

// run watches until stop is closed.
func (w *stallWatch) run(stop <-chan struct{}) {
	t := time.NewTicker(stallTick)
	defer t.Stop()
	w.look(time.Now())
	defer w.look(time.Time{})
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		w.look(time.Now())
	}
}

// look records a look at the clock at now, and the stall since the last
// one if it came stallMin late; a zero now ends the watch.
func (w *stallWatch) look(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s, ok := w.pending(now); ok {
		w.stalls[w.next] = s
		w.next = (w.next + 1) % stallsKept
	}
	w.last = now
}

// pending returns the stall under way at now that no look recorded yet,
// if any: a response that ended as the process ran again may be given
// back before the watch looked. w.mu must be held.
func (w *stallWatch) pending(now time.Time) (stall, bool) {
	if w.last.IsZero() || now.IsZero() {
		return stall{}, false
	}
	due := w.last.Add(stallTick)
	return stall{from: due, to: now}, now.Sub(due) >= stallMin
}

// within returns how long the process was stalled between from and to.
func (w *stallWatch) within(from, to time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	var d time.Duration
	all := w.stalls[:]
	if s, ok := w.pending(to); ok {
		all = append(all[:len(all):len(all)], s)
	}
	for _, s := range all {
		a, b := later(s.from, from), s.to
		if to.Before(b) {
			b = to
		}
		if b.After(a) {
			d += b.Sub(a)
		}
	}
	return d
}

// unstalled returns latency, a response time measured up to now, less the
// time the process was stalled meanwhile; 0 (not measured) if nothing is
// left.
func (w *stallWatch) unstalled(latency time.Duration, now time.Time) time.Duration {
	if latency <= 0 {
		return latency
	}
	return max(latency-w.within(now.Add(-latency), now), 0)
}
