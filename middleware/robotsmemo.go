package robotsmw

import (
	"net/url"
	"time"

	"github.com/robotsmw/robotsmw/policy"
)

// A robotsMemo is the robots.txt entry a host's last request was admitted
// under: the next request of the same origin, through the same cache,
// reads it without asking the cache (no origin string built, no store
// look-up) while it is fresh. A cached entry is the verdict until it
// expires (RFC 9309 §2.4), so the memo answers what the cache would; once
// it expires the cache is asked again, and a new fetch replaces it.
type robotsMemo struct {
	cache  *policy.Cache
	scheme string // u.Scheme and u.Host as the request wrote them
	host   string
	e      policy.Entry
	// agent is the product token whose Crawl-delay, delay, was applied
	// to the host under this entry (see Guard.check), so that the next
	// request for the same agent skips it; "" until one was. Written
	// once, under the host's mu, before the memo is published again.
	agent string
	delay time.Duration
}

// freshEntry reports whether e may be used at now without a fetch: fresh,
// and a verdict about the site (or a stale one kept while it is
// unreachable).
func freshEntry(e policy.Entry, now time.Time) bool {
	return now.Before(e.Expires) && (e.State != policy.StateUnreachable || e.Stale)
}

// A memoView is what a request read of its host's memo: the memo its
// entry came from or went to (nil if none), and the memo's agent and
// delay as they were then.
type memoView struct {
	m     *robotsMemo
	agent string
	delay time.Duration
}

// delayFor returns the Crawl-delay the memo says was applied to the host
// for agent, if it says so.
func (v memoView) delayFor(agent string) (time.Duration, bool) {
	if v.m == nil || v.agent == "" || v.agent != agent {
		return 0, false
	}
	return v.delay, true
}

// memo returns h's memo of the entry for u through cache, if it is fresh
// at now.
func (h *host) memo(cache *policy.Cache, u *url.URL, now time.Time) (memoView, bool) {
	h.mu.Lock()
	m := h.robots
	var v memoView
	if m != nil {
		v = memoView{m: m, agent: m.agent, delay: m.delay}
	}
	h.mu.Unlock()
	if m == nil || m.cache != cache || m.scheme != u.Scheme || m.host != u.Host || !freshEntry(m.e, now) {
		return memoView{}, false
	}
	return v, true
}

// applied records in m, h's memo, that the Crawl-delay d was applied to h
// for agent.
func (h *host) applied(m *robotsMemo, agent string, d time.Duration) {
	if m == nil {
		return
	}
	h.mu.Lock()
	if h.robots == m {
		m.agent, m.delay = agent, d
	}
	h.mu.Unlock()
}

// remember keeps e, the fresh entry for u through cache, as h's memo, and
// returns the view of it.
func (h *host) remember(cache *policy.Cache, u *url.URL, e policy.Entry) memoView {
	m := &robotsMemo{cache: cache, scheme: u.Scheme, host: u.Host, e: e}
	h.mu.Lock()
	h.robots = m
	v := memoView{m: m, agent: m.agent, delay: m.delay}
	h.mu.Unlock()
	return v
}
