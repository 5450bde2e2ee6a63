package robotsmw

import (
	"github.com/robotsmw/robotsmw/pace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/net/idna"
)

// Pacing constants (docs/politeness.md).
const (
	// maxInterval is the slowest spacing cuts lead to, unless MaxBackoff
	// is shorter or the floor (Rate or Crawl-delay) is slower still.
	maxInterval = 60 * time.Second
	// minCutInterval is where a cut of an unlimited host (no Rate, no
	// Crawl-delay) starts from; a limited host is cut from its interval.
	minCutInterval = 100 * time.Millisecond
	// recoverAfter healthy responses in a row, after the host's pause,
	// speed a cut host up by one step.
	recoverAfter = 5
	// forgiveAfter without a strike resets the strike count.
	forgiveAfter = 30 * time.Minute
)

// hostKey returns the key of u's host for pacing and back-off: the host
// name without scheme or port, lower case, without a trailing dot, an
// internationalised name in its punycode form (RFC 9309 §2.2.2 and RFC 3986 §6.2.2: the same
// host), so that bücher.example and xn--bcher-kva.example share one
// limiter. Google: the crawl rate and its reduction apply to "the whole
// hostname".
func hostKey(u *url.URL) string {
	name := u.Hostname()
	plain := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			plain = false
			break
		}
	}
	if plain && !strings.HasSuffix(name, ".") {
		return name // the common case: no copy
	}
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			if a, err := idna.Lookup.ToASCII(name); err == nil {
				return strings.TrimSuffix(a, ".")
			}
			break // invalid IDN: keep the name as written
		}
	}
	return name
}

// A host is the pacing and back-off state of one host name. It is kept
// small (docs/politeness.md): a broad crawl holds one per live host.
// Times are Unix nanoseconds on the Guard's clock.
//
// The schedule itself is the host's sched (a pace.Local) when the Guard
// has no Pacer, else in the Pacer; a host keeps the Guard's copy of what
// the schedule said (interval, pause, latency), its back-off state and its
// counters. A
// strike voids the schedule and wakes every waiter (changed, gen), who
// take new positions after the pause; a lease given back wakes them too
// (changed), to ask for the host again.
type host struct {
	// What a request reads first (its memo, whether the state is gone or
	// troubled, the name a look-up compares) comes first, mu and the
	// fields it guards next, the schedule last: a crawl going round its
	// hosts finds each host cold, and reads fewer cache lines so.
	//
	// robots is the robots.txt entry the last request was admitted
	// under (see robotsMemo); nil until one was.
	robots atomic.Pointer[robotsMemo]
	// gone is set when the host table forgets the state: a ticket's
	// pointer to it is then stale (see Guard.hostFor).
	gone atomic.Bool
	// hasTrouble mirrors t != nil, for healthy to skip the lock.
	hasTrouble atomic.Bool
	name       string
	// inline holds name's octets when they fit, next to the state a
	// request reads, so that a look-up compares the name without reading
	// the URL string it first came from (nor keeping that alive).
	inline [hostInline]byte
	// base is the spacing Rate asks for, or the host's HostRule's: the
	// floor before Crawl-delays; inFlight is its in-flight places. Both
	// are set when the state is made and never change.
	base     time.Duration
	inFlight int

	// mu guards every field below.
	mu sync.Mutex
	// interval is the current spacing between request starts, ≥ the
	// floor; 0 means no limit.
	interval time.Duration
	// lastSend is when the last request passed the gate.
	lastSend int64
	// pauseUntil is the hard gate set by Retry-After or back-off; nothing
	// is sent to the host before it.
	pauseUntil int64
	// latency is the host's smoothed response time, as its Pacer last
	// said; 0 if not known.
	latency time.Duration
	// waiters counts requests sleeping for this host; a host with waiters
	// is never evicted.
	waiters int32
	// queued counts the requests inside the host's schedule (see
	// Guard.schedule) right now: waiting for its pause, position or
	// lease. A retry that comes due while any are waits for them (see
	// Guard.mayGo). Atomic: read without mu.
	queued atomic.Int32
	// gen counts strikes, so a waiter can tell its slot was voided.
	gen uint32
	// changed, if not nil, is closed and cleared by the next strike.
	changed chan struct{}
	// t holds the rarely needed state: strikes, cuts, Crawl-delays.
	t *trouble
	// counters, read by Stats.
	sent, pages, blocked, deferred, retried, backoffs, gaveUp, notFollowed uint32
	// sched is the host's schedule when the Guard has no Pacer.
	sched pace.Local
}

// trouble is the part of a host's state that only hosts that failed, were
// cut or have a Crawl-delay need.
type trouble struct {
	// floor is the slowest of the Guard's Rate and the Crawl-delays of the
	// host's origins: the host is never paced faster.
	floor time.Duration
	// delays holds the Crawl-delay of each origin on the host.
	delays map[string]time.Duration
	// cut is set while a cut has raised interval above floor.
	cut bool
	// excluded is set while a Retry-After beyond maxRetryAfter holds;
	// asked is when a request last found the host excluded.
	excluded   bool
	asked      int64
	strikes    int
	healthyRun int
	lastStrike int64
	lastCut    int64
}

// newHost returns the state of a host first seen at now (Unix
// nanoseconds). Its schedule starts then, which also keeps it from looking
// idle while its first request waits for robots.txt.
func newHost(name string, rateFloor time.Duration, now int64) *host {
	h := &host{base: rateFloor, inFlight: 1, interval: rateFloor, lastSend: now}
	if len(name) <= len(h.inline) {
		h.name = unsafe.String(&h.inline[0], copy(h.inline[:], name))
	} else {
		h.name = strings.Clone(name)
	}
	return h
}

// hostInline is the longest host name a host holds inline (host.inline).
const hostInline = 40

// floor returns the host's floor; h.mu must be held.
func (h *host) floor(rateFloor time.Duration) time.Duration {
	if h.t != nil {
		return h.t.floor
	}
	return rateFloor
}

// troubled returns h.t, creating it; h.mu must be held.
func (h *host) troubled(rateFloor time.Duration) *trouble {
	if h.t == nil {
		h.t = &trouble{floor: rateFloor}
		h.hasTrouble.Store(true)
	}
	return h.t
}

// quiet reports whether the host holds nothing that evicting it would
// lose, at now: no waiter, no pause, no cut, no strike that is still
// counted, no Crawl-delay gap still due, nothing its own schedule holds
// due (a lease, a position ahead, a pause: pace.Local.Holds), and idle since
// idle: nothing sent, scheduled or first seen after it. h.mu must be held.
//
// A host's Crawl-delays go with it: its next request reads them again from
// robots.txt (Guard.check), so only the gap after its last request must
// have passed. A host excluded by a Retry-After beyond maxRetryAfter is
// kept while requests still ask for it, and forgotten once none did since
// idle: a site can name any number of hosts that all ask for such a
// pause, and a crawl must not hold them all. A request for the host after
// that finds the pause in the host's schedule (the Pacer keeps it while it
// holds; a Guard with no Pacer keeps the host, without its robots.txt,
// until the pause ends) and gives up at once (Guard.schedule).
func (h *host) quiet(now, idle int64) bool {
	if h.waiters > 0 {
		return false
	}
	t := h.t
	if t != nil && t.excluded {
		if max(h.lastSend, t.lastStrike, t.asked) > idle {
			return false
		}
		if h.sched.Holds(time.Unix(0, now)) {
			// The host is its own schedule's home (no Pacer): kept for
			// its pause, without its robots.txt memo, which the next
			// request that asks makes again.
			h.robots.Store(nil)
			return false
		}
		return true
	}
	if h.sched.Holds(time.Unix(0, now)) {
		return false
	}
	if now < h.pauseUntil || max(h.lastSend, h.pauseUntil) > idle {
		return false
	}
	return t == nil || !t.cut &&
		h.lastSend+int64(pace.EndGap(h.crawlDelay(), h.latency, latencyFactor)) <= idle &&
		(t.strikes == 0 || now-t.lastStrike > int64(forgiveAfter))
}

// wake voids the schedule: waiters wake and take new slots. h.mu must be
// held.
func (h *host) wake() {
	h.gen++
	if h.changed != nil {
		close(h.changed)
		h.changed = nil
	}
}

// notify wakes the waiters without voiding their positions: a lease was
// given back. h.mu must be held.
func (h *host) notify() {
	if h.changed != nil {
		close(h.changed)
		h.changed = nil
	}
}

// crawlDelay returns the longest Crawl-delay of the host's origins, the
// least gap after each response; h.mu must be held.
func (h *host) crawlDelay() time.Duration {
	var d time.Duration
	if h.t != nil {
		for _, v := range h.t.delays {
			d = max(d, v)
		}
	}
	return d
}

// setCrawlDelay records the Crawl-delay d of origin and updates the floor.
// Crawl-delay only raises the floor, never lowers it below Rate's.
func (h *host) setCrawlDelay(origin string, d, rateFloor time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.t == nil && d == 0 {
		return
	}
	t := h.troubled(rateFloor)
	if old, ok := t.delays[origin]; ok == (d != 0) && old == d {
		return
	}
	if d == 0 {
		delete(t.delays, origin)
	} else {
		if t.delays == nil {
			t.delays = make(map[string]time.Duration, 1)
		}
		t.delays[origin] = d
	}
	floor := rateFloor
	for _, v := range t.delays {
		floor = max(floor, v)
	}
	t.floor = floor
	if !t.cut || h.interval < floor {
		h.interval = floor
		t.cut = false
	}
}

// strike records a throttling (hard) or failing (soft) response at now and
// returns the pause it causes and whether it started or lengthened one. ra is the response's Retry-After (see
// policy.RetryAfter), if raOK. base and limit are the back-off base and cap
// for hard failures; u is a random number in [0, 1) for jitter.
//
// docs/politeness.md: the server's Retry-After comes first and is never
// shortened; without it the pause grows exponentially with the strikes in
// a row: strikes not separated by a healthy response after the pause (see
// healthy) nor by forgiveAfter. The pause merges with any current one by taking the later end. A
// Retry-After beyond maxRetryAfter excludes the host until it ends:
// requests to it give up at once rather than wait.
//
// A response that arrives while the host is paused belongs to the incident
// that paused it (no request is sent to a paused host): it can lengthen the
// pause, but counts no new strike and cuts nothing. A new incident cuts the
// rate, if the last cut is at least one interval old (TCP's once-per-window
// rule): a hard failure halves it (the interval doubles), a soft one cuts
// it to 0.8 (the interval grows by a quarter). An unlimited host is cut as
// if its interval were minCutInterval. Cuts stop at the shorter of
// maxInterval and limit, or at the floor if that is slower.
//
// The schedule is voided either way: every waiter wakes and takes a new
// slot after the pause.
func (h *host) strike(now time.Time, c class, ra time.Duration, raOK bool, base, limit, rateFloor time.Duration, u float64) (time.Duration, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := now.UnixNano()
	t := h.troubled(rateFloor)
	if n-t.lastStrike > int64(forgiveAfter) {
		t.strikes = 0
	}
	incident := t.strikes == 0 || n >= h.pauseUntil
	if incident {
		t.strikes++
		t.lastStrike = n
	}
	var pause time.Duration
	switch {
	case raOK:
		pause = ra
		if ra > maxRetryAfter {
			t.excluded = true
		}
	case c == hard:
		pause = backoff(base, limit, t.strikes, u)
	default:
		pause = backoff(base/softDivisor, limit, t.strikes, u)
	}
	longer := false
	if end := addNanos(n, pause); end > h.pauseUntil {
		h.pauseUntil = end
		h.backoffs++
		longer = true
	}
	t.healthyRun = 0
	if incident && (t.lastCut == 0 || n-t.lastCut >= int64(h.interval)) {
		next := h.interval
		if next == 0 {
			next = minCutInterval
		}
		if c == hard {
			next *= 2 // rate × 0.5
		} else {
			next = next * 5 / 4 // rate × 0.8
		}
		h.interval = min(next, max(min(maxInterval, limit), t.floor))
		t.cut = true
		t.lastCut = n
	}
	h.wake() // positions taken before the strike are void
	return pause, longer
}

// addNanos returns n plus d, saturating instead of overflowing.
func addNanos(n int64, d time.Duration) int64 {
	if d > 0 && n > (1<<63-1)-int64(d) {
		return 1<<63 - 1
	}
	return n + int64(d)
}

// healthy records a healthy response at now. One that arrives after the
// host's pause (a response to a request sent before the pause belongs to
// its incident) ends the run of failures: the strike count is reset, so
// the next failure's pause starts from the base again. recoverAfter of
// them in a row speed a cut host up one step: additively, by a sixteenth
// of the floor's rate (docs/politeness.md), or by halving the interval
// when the floor is unlimited. A host that has recovered and whose strikes
// are reset drops its trouble state. clock is read only for a host in
// trouble. When the response sped the host up, healthy returns its new
// interval and its floor, and ok.
func (h *host) healthy(clock func() time.Time) (interval, floor time.Duration, ok bool) {
	if !h.hasTrouble.Load() {
		return 0, 0, false // the common case, without the lock
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.t
	if t == nil {
		return 0, 0, false
	}
	n := clock().UnixNano()
	if t.excluded && n >= h.pauseUntil {
		t.excluded = false
	}
	if t.strikes > 0 && n-t.lastStrike > int64(forgiveAfter) {
		t.strikes = 0
	}
	if !t.cut && t.strikes == 0 {
		if !t.excluded && len(t.delays) == 0 {
			h.t = nil
			h.hasTrouble.Store(false)
		}
		return 0, 0, false
	}
	if n < h.pauseUntil {
		return 0, 0, false
	}
	t.strikes = 0
	if !t.cut {
		return 0, 0, false
	}
	t.healthyRun++
	if t.healthyRun < recoverAfter {
		return 0, 0, false
	}
	t.healthyRun = 0
	if t.floor == 0 {
		h.interval /= 2
		if h.interval < minCutInterval {
			h.interval = 0
		}
	} else {
		r := 1/h.interval.Seconds() + 1/(16*t.floor.Seconds())
		h.interval = max(t.floor, time.Duration(float64(time.Second)/r))
	}
	if h.interval <= t.floor {
		h.interval = t.floor
		t.cut = false
	}
	return h.interval, t.floor, true
}

// snapshot returns the host's statistics.
func (h *host) snapshot() HostStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := HostStats{
		Host:        h.name,
		Sent:        int64(h.sent),
		Pages:       int64(h.pages),
		Blocked:     int64(h.blocked),
		Deferred:    int64(h.deferred),
		Retried:     int64(h.retried),
		Backoffs:    int64(h.backoffs),
		GaveUp:      int64(h.gaveUp),
		NotFollowed: int64(h.notFollowed),
		Interval:    h.interval,
		Latency:     h.latency,
		Gap:         h.crawlDelay(),
	}
	if h.pauseUntil != 0 {
		s.PausedUntil = time.Unix(0, h.pauseUntil)
	}
	return s
}
