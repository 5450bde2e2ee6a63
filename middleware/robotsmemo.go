package robotsmw

import (
	"math"
	"net/url"
	"strings"
	"time"
	"unsafe"

	"github.com/robotsmw/robotsmw/policy"
)

// A robotsMemo is the robots.txt entry a host's last request was admitted
// under: the next request of the same origin, through the same cache,
// reads it without asking the cache (no origin string built, no store
// look-up) while it is fresh. A cached entry is the verdict until it
// expires (RFC 9309 §2.4), so the memo answers what the cache would; once
// it expires the cache is asked again, and a new fetch replaces it.
//
// A memo is never changed once published (host.robots is swapped for a
// new one), so a request reads it without the host's lock.
//
// What a request reads comes first, in as few cache lines as may be: a
// request finds its host's memo cold, as a crawl goes round its hosts.
type robotsMemo struct {
	// until is when e stops being usable without a fetch (see
	// freshEntry), in Unix ns: e.Expires, or 0 for an entry that holds no
	// verdict.
	until int64
	cache *policy.Cache
	// host and scheme are u.Host and u.Scheme as the request wrote them.
	// host's octets are in inline when they fit, which follows it in the
	// memo's first cache line; scheme is a constant for http and https.
	host string
	// inline holds host's octets when they fit (see host.inline).
	inline [hostInline]byte
	scheme string
	// agent is the product token the memo is for. match is e.Robots's
	// Matcher for it: a request of that agent is checked without reading
	// e.Robots, which a crawl going round its hosts finds cold. delayed
	// says that agent's Crawl-delay, delay, was applied to the host under
	// this entry (see Guard.check), so that its next request skips it.
	agent   string
	match   policy.Matcher
	delayed bool
	delay   time.Duration
	e       policy.Entry
}

// freshEntry reports whether e may be used at now without a fetch: fresh,
// and a verdict about the site (or a stale one kept while it is
// unreachable).
func freshEntry(e policy.Entry, now time.Time) bool {
	return now.Before(e.Expires) && (e.State != policy.StateUnreachable || e.Stale)
}

// allowed reports whether robots allows target for agent, through the
// memo's Matcher if it is agent's; m may be nil.
func (m *robotsMemo) allowed(robots *policy.Robots, agent string, target *url.URL) bool {
	if m != nil && m.agent == agent {
		return m.match.Allowed(target)
	}
	return robots.Allowed(agent, target)
}

// delayFor returns the Crawl-delay m says was applied to its host for
// agent, if it says so; m may be nil.
func (m *robotsMemo) delayFor(agent string) (time.Duration, bool) {
	if m == nil || !m.delayed || m.agent != agent {
		return 0, false
	}
	return m.delay, true
}

// memo returns h's memo of the entry for u through cache, if it is fresh
// at now.
func (h *host) memo(cache *policy.Cache, u *url.URL, now time.Time) (*robotsMemo, bool) {
	m := h.robots.Load()
	if m == nil || m.until == 0 || now.UnixNano() >= m.until || m.cache != cache || m.host != u.Host || m.scheme != u.Scheme {
		return nil, false
	}
	return m, true
}

// applied records that the Crawl-delay d was applied to h for agent under
// m, h's memo, unless another memo replaced it meanwhile. A memo for
// another agent becomes agent's.
func (h *host) applied(m *robotsMemo, agent string, d time.Duration) {
	if m == nil || m.delayed && m.agent == agent && m.delay == d {
		return
	}
	next := *m
	next.setHost(m.host)
	if agent != m.agent {
		next.agent, next.match = agent, m.e.Robots.Matcher(agent)
	}
	next.delayed, next.delay = true, d
	h.robots.CompareAndSwap(m, &next)
}

// remember keeps e, the fresh entry for u through cache, as h's memo,
// with its Matcher for agent, and returns it.
func (h *host) remember(cache *policy.Cache, u *url.URL, e policy.Entry, agent string) *robotsMemo {
	m := &robotsMemo{cache: cache, scheme: schemeOf(u), agent: agent, match: e.Robots.Matcher(agent), e: e}
	if e.State != policy.StateUnreachable || e.Stale {
		m.until = unixNano(e.Expires) // as freshEntry says
	}
	m.setHost(u.Host)
	h.robots.Store(m)
	return m
}

// schemeOf returns u.Scheme, as a constant if it is http or https: a memo
// keeps no URL's string alive, and its compare reads no cold octets.
func schemeOf(u *url.URL) string {
	switch u.Scheme {
	case "http":
		return "http"
	case "https":
		return "https"
	}
	return strings.Clone(u.Scheme)
}

// unixNano returns t in Unix ns, the largest such time for one beyond
// them (year 2262), and 0 for one before 1970 (the zero time too).
func unixNano(t time.Time) int64 {
	switch {
	case t.After(time.Unix(0, math.MaxInt64)):
		return math.MaxInt64
	case t.Before(time.Unix(0, 0)):
		return 0
	}
	return t.UnixNano()
}

// setHost sets m.host to a copy of host, inline if it fits (a memo does
// not keep the URL it was made for alive).
func (m *robotsMemo) setHost(host string) {
	if len(host) > len(m.inline) {
		m.host = strings.Clone(host)
		return
	}
	m.host = unsafe.String(&m.inline[0], copy(m.inline[:], host))
}
