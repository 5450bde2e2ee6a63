package robotsmw

import (
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/time/rate"
)

// Pacing constants (politeness.md §5.2 E and J).
const (
	// MaxCrawlDelay is the longest Crawl-delay the Guard honours. A longer
	// one excludes the host with ErrCrawlDelayTooLong unless
	// Guard.ClampCrawlDelay is set (Heritrix and crawler-commons use 300 s).
	MaxCrawlDelay = 300 * time.Second

	// maxInterval is the slowest spacing cuts lead to, unless the floor
	// (Rate or Crawl-delay) is slower still.
	maxInterval = 60 * time.Second
	// minCutInterval is where a cut of an unlimited host starts from.
	minCutInterval = 100 * time.Millisecond
	// recoverAfter healthy responses in a row speed a cut host up by one step.
	recoverAfter = 5
	// forgiveAfter without a strike resets the strike count.
	forgiveAfter = 30 * time.Minute
)

// hostKey returns the key of u's host for pacing and back-off: the host
// name without scheme or port, lower case, without a trailing dot, an
// internationalised name in its punycode form (ROBOTS.md §1: the same
// host), so that bücher.example and xn--bcher-kva.example share one
// limiter. Google: the crawl rate and its reduction apply to "the whole
// hostname".
func hostKey(u *url.URL) string {
	name := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
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

// every converts a spacing into a limit; 0 means no limit.
func every(d time.Duration) rate.Limit {
	if d <= 0 {
		return rate.Inf
	}
	return rate.Every(d)
}

// A host is the pacing and back-off state of one host name.
type host struct {
	name string

	// mu guards every field below.
	mu  sync.Mutex
	lim *rate.Limiter // burst 1, limit every(interval)
	// rateFloor is the spacing the Guard's Rate asks for (0: no limit);
	// delays holds the Crawl-delay of each origin on the host; floor is the
	// largest of them all: the host is never paced faster.
	rateFloor time.Duration
	delays    map[string]time.Duration
	floor     time.Duration
	// interval is the current spacing, ≥ floor; cut is set while a cut has
	// raised it above floor and it is recovering.
	interval time.Duration
	cut      bool
	// pauseUntil is the hard gate set by Retry-After or back-off; nothing
	// is sent to the host before it. excluded is set when it comes from a
	// Retry-After beyond maxRetryAfter. gen counts pauses and cuts, so
	// waiters that reserved before one can tell.
	pauseUntil time.Time
	excluded   bool
	// lastSend is when the last request passed, or will pass, the gate.
	lastSend   time.Time
	gen        uint64
	strikes    int
	lastStrike time.Time
	lastCut    time.Time
	healthyRun int
	stats      HostStats // counters only; Interval and PausedUntil are filled on read
}

func newHost(name string, rateFloor time.Duration) *host {
	return &host{
		name:      name,
		lim:       rate.NewLimiter(every(rateFloor), 1),
		rateFloor: rateFloor,
		floor:     rateFloor,
		interval:  rateFloor,
	}
}

// setCrawlDelay records the Crawl-delay d of origin and updates the floor.
// Crawl-delay only raises the floor, never lowers it below Rate's.
func (h *host) setCrawlDelay(now time.Time, origin string, d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.delays[origin] == d {
		return
	}
	if d == 0 {
		delete(h.delays, origin)
	} else {
		if h.delays == nil {
			h.delays = make(map[string]time.Duration)
		}
		h.delays[origin] = d
	}
	floor := h.rateFloor
	for _, v := range h.delays {
		floor = max(floor, v)
	}
	h.floor = floor
	if !h.cut || h.interval < floor {
		h.interval = floor
		h.cut = false
	}
	h.lim.SetLimitAt(now, every(h.interval))
}

// strike records a throttling (hard) or failing (soft) response at now and
// returns the pause it causes. ra is the response's Retry-After, if any.
// base and limit are the back-off base and cap for hard failures; u is a
// random number in [0, 1) for jitter.
//
// politeness.md §5.2 E: the server's Retry-After comes first and is never
// shortened (but lasts at least one interval); without it the pause grows
// exponentially with the strikes in a row. The pause merges with any
// current one by taking the later end.
//
// A response that arrives while the host is paused belongs to the incident
// that paused it (no request is sent to a paused host): it can lengthen the
// pause, but counts no new strike and cuts nothing. A new incident cuts the
// rate (×0.5 for hard, ×0.8 for soft failures) if the last cut is at least
// one interval old, like TCP's once-per-window rule.
func (h *host) strike(now time.Time, c class, ra time.Duration, raOK bool, base, limit time.Duration, u float64) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	if now.Sub(h.lastStrike) > forgiveAfter {
		h.strikes = 0
	}
	incident := h.strikes == 0 || !now.Before(h.pauseUntil)
	if incident {
		h.strikes++
		h.lastStrike = now
	}
	var pause time.Duration
	switch {
	case raOK:
		pause = max(ra, h.interval)
		if ra > maxRetryAfter {
			h.excluded = true
		}
	case c == hard:
		pause = backoff(base, limit, h.strikes, u)
	default:
		pause = backoff(base/softDivisor, limit, h.strikes, u)
	}
	if end := now.Add(pause); end.After(h.pauseUntil) {
		h.pauseUntil = end
		h.stats.Backoffs++
	}
	h.healthyRun = 0
	if incident && (h.lastCut.IsZero() || now.Sub(h.lastCut) >= h.interval) {
		next := max(h.interval, minCutInterval)
		if c == hard {
			next *= 2 // rate × 0.5
		} else {
			next = next * 5 / 4 // rate × 0.8
		}
		h.interval = min(next, max(maxInterval, h.floor))
		h.cut = true
		h.lastCut = now
		h.lim.SetLimitAt(now, every(h.interval))
	}
	h.gen++
	return pause
}

// healthy records a healthy response at now. After recoverAfter of them in
// a row a cut host speeds up one step: additively, by a sixteenth of the
// floor's rate (politeness.md §5.2 E), or by doubling when the floor is
// unlimited.
func (h *host) healthy(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.cut {
		return
	}
	h.healthyRun++
	if h.healthyRun < recoverAfter {
		return
	}
	h.healthyRun = 0
	if h.floor == 0 {
		h.interval /= 2
		if h.interval < minCutInterval {
			h.interval = 0
		}
	} else {
		r := 1/h.interval.Seconds() + 1/(16*h.floor.Seconds())
		h.interval = max(h.floor, time.Duration(float64(time.Second)/r))
	}
	if h.interval <= h.floor {
		h.interval = h.floor
		h.cut = false
	}
	h.lim.SetLimitAt(now, every(h.interval))
}

// snapshot returns the host's statistics.
func (h *host) snapshot() HostStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.stats
	s.Interval = h.interval
	s.PausedUntil = h.pauseUntil
	return s
}

// count adds one to the counter f picks.
func (h *host) count(f func(*HostStats) *int64) {
	h.mu.Lock()
	*f(&h.stats)++
	h.mu.Unlock()
}
