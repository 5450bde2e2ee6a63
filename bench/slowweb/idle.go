package main

import (
	"fmt"
	"sort"
	"time"

	"github.com/robotsmw/robotsmw/pace"
)

// A span is one request at the site: when it arrived and when its
// response ended.
type span struct{ start, end time.Time }

// Idle is where a crawl under the Guard's rules lost time, seen at the
// site: how much later than the rules of Bound allowed each request came
// after its host's previous one, and when each host's first request came.
type Idle struct {
	Requests  int           // requests after their host's first
	Late      time.Duration // their lateness in all
	LateMed   time.Duration // median lateness
	Late95    time.Duration // 95th percentile
	LateMax   time.Duration
	LateMaxAt string        // the request that came latest: host, its number there (0: the first), its start
	FirstMed  time.Duration // median time from Reset to a host's first request
	FirstMax  time.Duration // the latest first request
	LastTotal time.Duration // from Reset to the last response's end
}

// Idle measures, since the last Reset, how late each request came after
// the one before it at its host: the time from the previous response's
// end minus the least the Guard's rules (see Bound) allowed, with the
// smoothed response time taken from the responses the site gave
// (latencyGap false: FixedPace, no latency gap). A request a colly
// callback or the Guard's queue kept beyond its turn shows here; the
// client's own transfer time (microseconds on loopback) too.
func (s *Site) Idle(latencyGap bool) Idle {
	factor := 0.0
	if latencyGap {
		factor = guardLatencyFactor
	}
	var res Idle
	var late, firsts []time.Duration
	for _, h := range s.hosts {
		h.mu.Lock()
		sp := append([]span(nil), h.spans...)
		h.mu.Unlock()
		if len(sp) == 0 {
			continue
		}
		sort.Slice(sp, func(i, j int) bool { return sp[i].start.Before(sp[j].start) })
		firsts = append(firsts, sp[0].start.Sub(s.resetAt))
		interval := max(guardInterval, h.CrawlDelay)
		var smoothed time.Duration
		for i, r := range sp {
			res.LastTotal = max(res.LastTotal, r.end.Sub(s.resetAt))
			if i > 0 {
				p := sp[i-1]
				allowed := maxTime(p.start.Add(interval), p.end.Add(pace.EndGap(h.CrawlDelay, smoothed, factor)))
				l := max(r.start.Sub(allowed), 0)
				late = append(late, l)
				res.Late += l
				if l > res.LateMax {
					res.LateMax = l
					res.LateMaxAt = fmt.Sprintf("%s #%d at %.2f s", h.Name, i, r.start.Sub(s.resetAt).Seconds())
				}
			}
			smoothed = smoothLatency(smoothed, r.end.Sub(r.start))
		}
	}
	res.Requests = len(late)
	res.LateMed, res.Late95 = quantile(late, 50), quantile(late, 95)
	res.FirstMed, res.FirstMax = quantile(firsts, 50), quantile(firsts, 100)
	return res
}

// Span returns when host's first request came and when its last response
// ended, since the last Reset; zeros if it had none.
func (s *Site) Span(host string) (first, last time.Duration) {
	h := s.hosts[host]
	if h == nil {
		return 0, 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, r := range h.spans {
		if i == 0 || r.start.Sub(s.resetAt) < first {
			first = r.start.Sub(s.resetAt)
		}
		last = max(last, r.end.Sub(s.resetAt))
	}
	return first, last
}

// quantile returns the q-th percentile of ds (nearest rank), or 0.
func quantile(ds []time.Duration, q int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[max((q*len(s)+99)/100, 1)-1]
}

// maxTime returns the later of a and b.
func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
