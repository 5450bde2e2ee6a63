package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// A Scenario is "a slow web": many hosts, each with its own latency, some
// with a Crawl-delay, some that degrade under load. It is drawn from Seed,
// so the parent process and a crawling child build the same one.
type Scenario struct {
	Hosts  int           // number of hosts
	Pages  int           // linked pages per host
	Median time.Duration // median of the hosts' base latencies
	Sigma  float64       // spread (σ of the log) of the hosts' base latencies
	Min    time.Duration // no host's base latency is below this
	Max    time.Duration // nor above this
	// CrawlDelays are the Crawl-delay values (whole seconds) of the hosts
	// that have one: every CrawlDelayEvery-th host, in turn.
	CrawlDelays     []int
	CrawlDelayEvery int
	// Every DegradeEvery-th host degrades with its load: a request that
	// arrives while n requests are in flight there (itself included)
	// takes base × (1 + DegradeSlope × (n − Knee + 1)) once n ≥ Knee.
	DegradeEvery int
	Knee         int
	DegradeSlope float64
	Seed         uint64
}

// A Host is one host of a Scenario.
type Host struct {
	Name       string
	Base       time.Duration // unloaded median latency
	CrawlDelay time.Duration // 0: none
	Degrades   bool
}

// Default is the full scenario the README's table measures.
var Default = Scenario{
	Hosts: 1000, Pages: 5,
	Median: 100 * time.Millisecond, Sigma: 1.0, Min: 10 * time.Millisecond, Max: 2 * time.Second,
	CrawlDelays: []int{2, 3}, CrawlDelayEvery: 7,
	DegradeEvery: 10, Knee: 2, DegradeSlope: 3,
	Seed: 1,
}

// Build draws the hosts of s.
func (s Scenario) Build() []Host {
	rng := rand.New(rand.NewPCG(s.Seed, 0x51077eb))
	hosts := make([]Host, s.Hosts)
	cd := 0
	for i := range hosts {
		h := &hosts[i]
		h.Name = fmt.Sprintf("h%04d.slow.test", i)
		base := time.Duration(float64(s.Median) * math.Exp(s.Sigma*rng.NormFloat64()))
		h.Base = min(max(base, s.Min), s.Max)
		if s.CrawlDelayEvery > 0 && i%s.CrawlDelayEvery == 3 && len(s.CrawlDelays) > 0 {
			h.CrawlDelay = time.Duration(s.CrawlDelays[cd%len(s.CrawlDelays)]) * time.Second
			cd++
		}
		h.Degrades = s.DegradeEvery > 0 && i%s.DegradeEvery == 5
	}
	return hosts
}

// latency returns how long a request to h takes that arrives while n
// requests are in flight there, itself included; jitter is a standard
// normal draw.
func (s Scenario) latency(h *Host, n int, jitter float64) time.Duration {
	d := float64(h.Base) * math.Exp(0.25*jitter)
	if h.Degrades && n >= s.Knee {
		d *= 1 + s.DegradeSlope*float64(n-s.Knee+1)
	}
	return time.Duration(d)
}
