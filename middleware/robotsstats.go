package robotsmw

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/robotsmw/robotsmw/policy"
)

// RobotsStats counts the robots.txt fetches of the Guard's own cache (a
// Cache supplied in Guard.Cache fetches outside the Guard: its fetches
// are not counted). Each fetch counts once, in one of the first six
// fields, however many requests waited for it.
type RobotsStats struct {
	// Parsed counts the fetches answered 2xx: the rules read apply.
	Parsed int64
	// AllowAll counts the fetches answered 4xx other than 429, or
	// redirected too often: everything is allowed (RFC 9309 §2.3.1.3).
	AllowAll int64
	// The fetches that found robots.txt unreachable (RFC 9309 §2.3.1.4),
	// by cause: answered 429; answered 5xx; no answer within the fetch's
	// timeout; any other failure (connection refused or reset, DNS, TLS,
	// an address netguard refused, a body cut short).
	Status429, Status5xx, Timeout, Network int64
	// Unreachable is the number of origins whose last robots.txt fetch
	// found it unreachable, now; an origin leaves it when a fetch gives a
	// verdict again. At most 10,000 origins are tracked.
	Unreachable int
}

// maxRobotsDown bounds the origins robotsDown tracks: a broad crawl meets
// many dead sites, and the gauge is not worth unbounded memory.
const maxRobotsDown = 10_000

// robotsCounts is what RobotsStats is made from. Safe for concurrent use.
type robotsCounts struct {
	parsed, allowAll, status429, status5xx, timeout, network atomic.Int64

	mu   sync.Mutex          // guards down
	down map[string]struct{} // origins whose last fetch failed
}

// robotsFetched counts one fetch of the Guard's own cache (its
// policy.Cache.OnFetch).
func (g *Guard) robotsFetched(e policy.Entry) {
	r := &g.robotsCounts
	switch e.State {
	case policy.StateParsed:
		r.parsed.Add(1)
	case policy.StateUnavailable:
		r.allowAll.Add(1)
	case policy.StateUnreachable:
		switch {
		case e.StatusCode == http.StatusTooManyRequests:
			r.status429.Add(1)
		case e.StatusCode >= 500:
			r.status5xx.Add(1)
		case isTimeout(e.Err):
			r.timeout.Add(1)
		default:
			r.network.Add(1)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.State != policy.StateUnreachable {
		delete(r.down, e.Origin)
		return
	}
	if r.down == nil {
		r.down = make(map[string]struct{})
	}
	if len(r.down) < maxRobotsDown {
		r.down[e.Origin] = struct{}{}
	}
}

// isTimeout reports whether err is a timeout: a deadline that passed, or
// a network error that says so.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// snapshot returns the counts.
func (r *robotsCounts) snapshot() RobotsStats {
	r.mu.Lock()
	down := len(r.down)
	r.mu.Unlock()
	return RobotsStats{
		Parsed: r.parsed.Load(), AllowAll: r.allowAll.Load(),
		Status429: r.status429.Load(), Status5xx: r.status5xx.Load(),
		Timeout: r.timeout.Load(), Network: r.network.Load(),
		Unreachable: down,
	}
}
