package robotsmw

import (
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// defaultIdleTimeout is how long a host's state is kept after it went quiet
// when Guard.IdleTimeout is zero.
const defaultIdleTimeout = 5 * time.Minute

// A hostTable holds the state of the hosts a Guard has seen, and forgets a
// host once it has been quiet for the idle timeout: no request waiting or
// sent, no pause, cut or counted strike, no Crawl-delay gap still due, no
// request asking for it while excluded (see host.quiet). Forgetting such a
// host loses nothing but its counters, which the Guard's totals keep, and
// its Crawl-delays, which its next request reads again. So a broad crawl
// holds state only for the hosts it is working on.
//
// Sweeps are amortised: one runs, under the write lock, when a host is
// added or Stats is read and half the idle timeout has passed since the
// last one. A sweep that drops most hosts copies the rest into a new map,
// since Go maps do not shrink.
type hostTable struct {
	// mu guards m and lastSweep.
	mu        sync.RWMutex
	m         map[string]*host
	lastSweep int64

	evicted atomic.Int64

	// recent holds hosts by a hash of their name, so that most look-ups
	// take no lock and no map probe: an entry of another name, or of a
	// host the table forgot (gone), is a miss.
	recent [recentHosts]atomic.Pointer[host]
}

// recentHosts is the size of hostTable.recent, a power of two.
const recentHosts = 1024

// recentSlot returns the slot of name in hostTable.recent (FNV-1a).
func recentSlot(name string) int {
	h := uint32(2166136261)
	for i := 0; i < len(name); i++ {
		h ^= uint32(name[i])
		h *= 16777619
	}
	return int(h & (recentHosts - 1))
}

// get returns the state of the host named name, creating it on first use
// with mk. clock returns the Guard's clock in Unix nanoseconds; it is read
// only then.
func (t *hostTable) get(name string, idle time.Duration, clock func() int64, mk func(name string, now int64) *host) *host {
	slot := &t.recent[recentSlot(name)]
	if h := slot.Load(); h != nil && h.name == name && !h.gone.Load() {
		return h
	}
	t.mu.RLock()
	h := t.m[name]
	t.mu.RUnlock()
	if h != nil {
		t.remember(slot, h)
		return h
	}
	now := clock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if h = t.m[name]; h != nil {
		return h
	}
	if t.m == nil {
		t.m = make(map[string]*host)
		t.lastSweep = now
	}
	t.sweepLocked(now, idle)
	h = mk(name, now)
	t.m[h.name] = h
	slot.Store(h)
	return h
}

// remember puts h in its slot of recent, unless a sweep forgot it
// meanwhile: recent must not keep forgotten hosts (and their robots.txt)
// alive.
func (t *hostTable) remember(slot *atomic.Pointer[host], h *host) {
	slot.Store(h)
	if h.gone.Load() {
		slot.CompareAndSwap(h, nil)
	}
}

// sweep forgets quiet hosts if a sweep is due.
func (t *hostTable) sweep(now int64, idle time.Duration) {
	t.mu.RLock()
	due := now-t.lastSweep >= int64(idle/2)
	t.mu.RUnlock()
	if due {
		t.mu.Lock()
		t.sweepLocked(now, idle)
		t.mu.Unlock()
	}
}

// sweepLocked forgets hosts quiet since now−idle, if half of idle has
// passed since the last sweep. t.mu must be held for writing.
func (t *hostTable) sweepLocked(now int64, idle time.Duration) {
	if now-t.lastSweep < int64(idle/2) {
		return
	}
	t.lastSweep = now
	before := len(t.m)
	cutoff := now - int64(idle)
	for name, h := range t.m {
		h.mu.Lock()
		q := h.quiet(now, cutoff)
		h.mu.Unlock()
		if q {
			delete(t.m, name)
			h.gone.Store(true)
			t.recent[recentSlot(name)].CompareAndSwap(h, nil)
		}
	}
	dropped := before - len(t.m)
	t.evicted.Add(int64(dropped))
	if dropped > 0 && dropped >= before/2 {
		m := make(map[string]*host, len(t.m))
		for k, v := range t.m {
			m[k] = v
		}
		t.m = m
	}
}

// lookup returns the state of the host named name, if it is kept.
func (t *hostTable) lookup(name string) *host {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.m[name]
}

// hostFor returns the state of u's host: the one the request of visit v
// was admitted to, while the table keeps it and u still names it (a
// callback may have changed the URL), which spares a look-up; otherwise,
// or if v is nil, the one the table has.
func (g *Guard) hostFor(v *visit, u *url.URL) *host {
	if v != nil {
		if h := v.h; h != nil && !h.gone.Load() && (u == v.orig || h.name == hostKey(u)) {
			return h
		}
	}
	return g.host(u)
}

// host returns the state of u's host, creating it on first use.
func (g *Guard) host(u *url.URL) *host {
	return g.hosts.get(hostKey(u), g.idleTimeout(), func() int64 { return g.clock().UnixNano() }, g.newHost)
}

// newHost returns the state of the host named name first seen at now,
// with its Rate and InFlight, or its HostRule's.
func (g *Guard) newHost(name string, now int64) *host {
	floor, n := g.rateFloor(), g.hostInFlight()
	if r := g.hostRule(name); r != nil {
		if r.Rate != 0 {
			floor = limitInterval(r.Rate)
		}
		if r.InFlight > 0 {
			n = r.InFlight
		}
	}
	h := newHost(name, floor, now)
	h.inFlight = n
	return h
}

func (g *Guard) idleTimeout() time.Duration {
	if g.IdleTimeout > 0 {
		return g.IdleTimeout
	}
	return defaultIdleTimeout
}
