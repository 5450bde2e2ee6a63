package main

import (
	"math/rand/v2"
	"sort"
	"time"

	"github.com/robotsmw/robotsmw/pace"
)

// The Guard's defaults that bound a crawl of the scenario (see the
// Guard's Rate, FixedPace and MaxRobotsFetches docs): a start per second
// per host, one request in flight per host, and at most 64 robots.txt
// fetches at once.
const (
	guardInterval    = time.Second
	guardRobotsSlots = 64
	// guardLatencyFactor times a host's smoothed response time is the
	// least gap after a response (Guard.FixedPace's doc: "at least the
	// host's smoothed response time").
	guardLatencyFactor = 1.0
)

// A Bound is the fastest crawl of a scenario that the Guard's own
// politeness rules allow: each host's requests (robots.txt, then its
// pages) one at a time, each starting no sooner than the Rate's interval
// (raised to Crawl-delay) after the previous start and the gap
// (pace.EndGap of Crawl-delay and the smoothed response time) after the
// previous end, with every response taking exactly the time the site
// will take (its per-host random draws are known in advance); the
// robots.txt fetches in the order the hosts are visited, at most 64 at
// once. The collector adds no cap: slowweb's Guard rows set no colly
// Parallelism.
type Bound struct {
	Pages     int           // pages answered by Within
	Within    time.Duration // min(Full, the budget)
	Full      time.Duration // when the last page of the slowest host ends
	Slowest   string        // that host
	SlowFirst time.Duration // when its first request (robots.txt) starts
	Pages95   time.Duration // when 95 % of all pages have ended
	PagesPerS float64       // Pages / Within
}

// bound returns the Bound of sc for the Guard with its latency gap
// (latencyGap) or FixedPace, for a crawl stopped after budget.
func bound(sc Scenario, latencyGap bool, budget time.Duration) Bound {
	factor := 0.0
	if latencyGap {
		factor = guardLatencyFactor
	}
	hosts := sc.Build()
	// The robots.txt fetches: first come, first served, 64 at once. A
	// host's first request is its robots.txt, so it starts when a place
	// is free.
	free := make([]time.Duration, guardRobotsSlots) // when each place is free
	var ends []time.Duration
	var b Bound
	for i, h := range hosts {
		rng := rand.New(rand.NewPCG(sc.Seed, uint64(i))) // the site's draws for h
		slot := 0
		for k := range free {
			if free[k] < free[slot] {
				slot = k
			}
		}
		interval := max(guardInterval, h.CrawlDelay)
		var first, start, end, smoothed time.Duration
		for r := 0; r <= sc.Pages; r++ { // r 0 is robots.txt
			if r == 0 {
				start, first = free[slot], free[slot]
			} else {
				start = max(start+interval, end+pace.EndGap(h.CrawlDelay, smoothed, factor))
			}
			lat := sc.latency(&h, 1, rng.NormFloat64())
			end = start + lat
			smoothed = smoothLatency(smoothed, lat)
			if r == 0 {
				free[slot] = end
			} else {
				ends = append(ends, end)
			}
		}
		if end > b.Full {
			b.Full, b.Slowest, b.SlowFirst = end, h.Name, first
		}
	}
	sort.Slice(ends, func(i, j int) bool { return ends[i] < ends[j] })
	if len(ends) > 0 {
		b.Pages95 = ends[(95*len(ends)+99)/100-1]
	}
	b.Within = min(b.Full, budget)
	b.Pages = sort.Search(len(ends), func(i int) bool { return ends[i] > b.Within })
	if b.Within > 0 {
		b.PagesPerS = float64(b.Pages) / b.Within.Seconds()
	}
	return b
}

// smoothLatency is the Guard's smoothed response time after a healthy
// response that took sample (Guard.FixedPace's doc): a slower one raises
// it to its own time at once, a faster one lowers it by a quarter of the
// difference.
func smoothLatency(old, sample time.Duration) time.Duration {
	if sample >= old {
		return sample
	}
	return old - (old-sample)/4
}
