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
}

// freshEntry reports whether e may be used at now without a fetch: fresh,
// and a verdict about the site (or a stale one kept while it is
// unreachable).
func freshEntry(e policy.Entry, now time.Time) bool {
	return now.Before(e.Expires) && (e.State != policy.StateUnreachable || e.Stale)
}

// memo returns h's memo of the entry for u through cache, if it is fresh
// at now.
func (h *host) memo(cache *policy.Cache, u *url.URL, now time.Time) (policy.Entry, bool) {
	h.mu.Lock()
	m := h.robots
	h.mu.Unlock()
	if m == nil || m.cache != cache || m.scheme != u.Scheme || m.host != u.Host || !freshEntry(m.e, now) {
		return policy.Entry{}, false
	}
	return m.e, true
}

// remember keeps e, the fresh entry for u through cache, as h's memo.
func (h *host) remember(cache *policy.Cache, u *url.URL, e policy.Entry) {
	m := &robotsMemo{cache: cache, scheme: u.Scheme, host: u.Host, e: e}
	h.mu.Lock()
	h.robots = m
	h.mu.Unlock()
}
