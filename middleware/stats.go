package robotsmw

import (
	"fmt"
	"sort"
	"sync/atomic"
	"time"

	"github.com/robotsmw/robotsmw/pace"
	"github.com/robotsmw/robotsmw/policy"
)

// busiest is how many hosts Stats lists.
const busiest = 10

// HostStats counts what a [Guard] did for one host, or for all of them.
type HostStats struct {
	// Host is the host name (without scheme or port); empty in totals.
	Host string
	// Sent counts the requests sent to the host: every request the Guard
	// let through its gate, whatever it was for: pages, redirect hops,
	// retries, the Guard's own robots.txt fetches and the sitemaps of Seed
	// (and any request through Guard.Transport). A request whose connection
	// the host refused or reset counts (it is the host's failure, and backs
	// it off); one whose address netguard refused before dialling does not.
	Sent int64
	// Pages counts the pages fetched: colly requests whose final response
	// (after redirects, any status colly does not retry) was read, to its
	// end or as far as colly wanted (MaxBodySize). A redirect that colly
	// does not follow (its limit of 10 hops, a URL filter, a page visited
	// already) is its request's final response, and counts. Not
	// robots.txt, nor sitemaps, nor attempts that are retried, nor
	// responses colly's CacheDir replays.
	Pages int64
	// Blocked counts requests and redirect hops that robots.txt disallows,
	// or that a too long Crawl-delay excludes.
	Blocked int64
	// Deferred counts the times a request was put off without being sent,
	// because it would have waited longer than MaxWait for its host or its
	// robots.txt, and will be sent again later (counted as it reaches
	// OnError: a synchronous collector's requests wait in place instead).
	Deferred int64
	// Retried counts failed attempts (429, 5xx, network errors, bodies cut
	// short) that the Guard sent again, once the retry is sent: one the
	// crawl's end or colly refused is not counted. Like every counter of
	// Stats it only grows (Waiting and InFlight are levels).
	Retried int64
	// Backoffs counts the pauses that 429, 5xx or network errors started
	// or lengthened, robots.txt fetches' included.
	Backoffs int64
	// GaveUp counts requests reported as final failures: ErrGaveUp,
	// ErrRobotsUnreachable, or the end of the collector's context (or of a
	// Guard.Transport request's). Blocked, GaveUp and NotFollowed count
	// outcomes as they are delivered, once each: a request that a later
	// OnRequest callback of yours aborted is in none of them.
	GaveUp int64
	// NotFollowed counts the links of the host's pages that FollowLinks
	// did not visit: the page said nofollow (meta robots, X-Robots-Tag) or
	// the link is rel="nofollow".
	NotFollowed int64
	// Interval is the current spacing between request starts; 0 means
	// no limit. It grows after cuts and shrinks as the host recovers.
	// Zero in totals.
	Interval time.Duration
	// Latency is the host's smoothed response time (headers and body),
	// as its schedule knows it; 0 if not known yet. Zero in totals.
	Latency time.Duration
	// Gap is the least time the host is left alone after each response
	// before the next request starts: its Crawl-delay, or its smoothed
	// latency if that is longer (see Guard.FixedPace). Zero in totals.
	Gap time.Duration
	// PausedUntil is the end of the host's current or last pause; in
	// totals, the latest of the listed hosts'.
	PausedUntil time.Time
}

// Stats is a snapshot of a Guard's statistics. It costs the same however
// many hosts a broad crawl has seen: totals are kept as they happen, and
// only the busiest hosts are listed.
type Stats struct {
	// Total sums the counters over every host, forgotten ones included.
	Total HostStats
	// Hosts is the number of hosts whose state the Guard keeps now.
	Hosts int
	// Evicted counts host states forgotten after they went quiet (see
	// Guard.IdleTimeout).
	Evicted int64
	// Waiting is the number of requests deferred now, waiting to be sent
	// again.
	Waiting int
	// PausedHosts is the number of kept hosts paused now (429, 5xx,
	// network errors; see HostStats.PausedUntil).
	PausedHosts int
	// InFlight is the number of colly requests sent whose response (its
	// headers) or error has not arrived yet.
	InFlight int
	// Waits is how long requests waited inside colly's callbacks before
	// they were sent (see WaitStats).
	Waits WaitStats
	// Busiest lists up to 10 of the kept hosts, most Sent first.
	Busiest []HostStats
	// Robots counts the robots.txt fetches of the Guard's cache (its own,
	// or Cache) by result, and the origins whose robots.txt is
	// unreachable now.
	Robots policy.FetchStats
}

// A counter names one of the per-host counters.
type counter uint8

const (
	cSent counter = iota
	cPages
	cBlocked
	cDeferred
	cRetried
	cBackoffs
	cGaveUp
	cNotFollowed
	nCounters
)

// totals are the Guard's counters summed over all hosts.
type totals [nCounters]atomic.Int64

// count adds one to counter k of h and of the totals.
func (g *Guard) count(h *host, k counter) {
	h.mu.Lock()
	h.add(k)
	h.mu.Unlock()
	g.totals[k].Add(1)
}

// add adds one to counter k; h.mu must be held.
func (h *host) add(k counter) { *h.counter(k)++ }

// counter returns h's count of k; h.mu must be held.
func (h *host) counter(k counter) *uint32 {
	switch k {
	case cSent:
		return &h.sent
	case cPages:
		return &h.pages
	case cBlocked:
		return &h.blocked
	case cDeferred:
		return &h.deferred
	case cRetried:
		return &h.retried
	case cBackoffs:
		return &h.backoffs
	case cGaveUp:
		return &h.gaveUp
	case cNotFollowed:
		return &h.notFollowed
	}
	panic(fmt.Sprintf("robotsmw: no counter %d", k))
}

// Stats returns a snapshot of the Guard's statistics. It is safe to call at
// any time, also while requests run. It also forgets quiet hosts when a
// sweep is due (see IdleTimeout). The totals are counters; finding the
// busiest hosts scans the host table (about 90 ns per host kept, during
// which new hosts wait to be added): call it for a progress line every
// second or so, not per request. Host reads one host in O(1).
func (g *Guard) Stats() Stats {
	now := g.clock().UnixNano()
	g.hosts.sweep(now, g.idleTimeout())
	s := Stats{
		Total: HostStats{
			Sent:        g.totals[cSent].Load(),
			Pages:       g.totals[cPages].Load(),
			Blocked:     g.totals[cBlocked].Load(),
			Deferred:    g.totals[cDeferred].Load(),
			Retried:     g.totals[cRetried].Load(),
			Backoffs:    g.totals[cBackoffs].Load(),
			GaveUp:      g.totals[cGaveUp].Load(),
			NotFollowed: g.totals[cNotFollowed].Load(),
		},
		Evicted:  g.hosts.evicted.Load(),
		Waiting:  g.later.len(),
		InFlight: g.inFlight(),
		Waits:    g.waits.snapshot(),
		Robots:   g.robotsStats(),
	}
	// The busiest hosts: one pass, keeping the top few, no copy of the
	// table.
	type entry struct {
		h    *host
		sent uint32
	}
	var top []entry
	g.hosts.mu.RLock()
	s.Hosts = len(g.hosts.m)
	for _, h := range g.hosts.m {
		h.mu.Lock()
		f := h.sent
		if h.pauseUntil > now {
			s.PausedHosts++
		}
		h.mu.Unlock()
		if len(top) == busiest && f <= top[busiest-1].sent {
			continue
		}
		i := sort.Search(len(top), func(i int) bool { return top[i].sent < f })
		if len(top) < busiest {
			top = append(top, entry{})
		}
		copy(top[i+1:], top[i:])
		top[i] = entry{h, f}
	}
	g.hosts.mu.RUnlock()
	for _, e := range top {
		hs := g.snapshot(e.h)
		s.Busiest = append(s.Busiest, hs)
		if hs.PausedUntil.After(s.Total.PausedUntil) {
			s.Total.PausedUntil = hs.PausedUntil
		}
	}
	return s
}

// hostStats returns the statistics of the host named name (as in
// HostStats.Host: lower case, without scheme or port), if its state is
// kept.
func (g *Guard) hostStats(name string) (HostStats, bool) {
	h := g.hosts.lookup(name)
	if h == nil {
		return HostStats{}, false
	}
	return g.snapshot(h), true
}

// snapshot returns h's statistics, its gap as the Guard paces it.
func (g *Guard) snapshot(h *host) HostStats {
	hs := h.snapshot()
	if !g.FixedPace {
		hs.Gap = pace.EndGap(hs.Gap, hs.Latency, latencyFactor)
	}
	return hs
}
