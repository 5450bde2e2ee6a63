package robotsmw

import "time"

// HostStats counts what a [Guard] did for one host.
type HostStats struct {
	// Fetched counts requests the Guard let through to the host: pages,
	// redirect hops, retries and the Guard's own robots.txt fetches.
	Fetched int64
	// Blocked counts requests and redirect hops that robots.txt disallows,
	// or that a too long Crawl-delay excludes.
	Blocked int64
	// Deferred counts the times a request waited for the host's robots.txt,
	// which was unreachable, to be due again.
	Deferred int64
	// Retried counts requests sent again after 429, 5xx or network errors,
	// or after a redirect hop had to wait.
	Retried int64
	// Backoffs counts the pauses that 429, 5xx or network errors started
	// or lengthened.
	Backoffs int64
	// GaveUp counts requests reported with ErrGaveUp, ErrRobotsUnreachable
	// or the end of the collector's context.
	GaveUp int64
	// Interval is the current spacing between request starts; 0 means
	// no limit. It grows after cuts and shrinks as the host recovers.
	Interval time.Duration
	// PausedUntil is the end of the host's current or last pause.
	PausedUntil time.Time
}

// Stats is a snapshot of a Guard's statistics.
type Stats struct {
	// Hosts maps a host name (without scheme or port) to its statistics.
	Hosts map[string]HostStats
	// Total sums the counters of all hosts; its Interval is zero and its
	// PausedUntil is the latest of the hosts'.
	Total HostStats
}

// Stats returns a snapshot of the Guard's statistics. It is safe to call
// at any time, also while requests run.
func (g *Guard) Stats() Stats {
	g.mu.RLock()
	hosts := make([]*host, 0, len(g.hosts))
	for _, h := range g.hosts {
		hosts = append(hosts, h)
	}
	g.mu.RUnlock()
	s := Stats{Hosts: make(map[string]HostStats, len(hosts))}
	for _, h := range hosts {
		hs := h.snapshot()
		s.Hosts[h.name] = hs
		s.Total.Fetched += hs.Fetched
		s.Total.Blocked += hs.Blocked
		s.Total.Deferred += hs.Deferred
		s.Total.Retried += hs.Retried
		s.Total.Backoffs += hs.Backoffs
		s.Total.GaveUp += hs.GaveUp
		if hs.PausedUntil.After(s.Total.PausedUntil) {
			s.Total.PausedUntil = hs.PausedUntil
		}
	}
	return s
}
