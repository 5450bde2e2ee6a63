package main

import (
	"testing"
	"time"
)

// small is a slow web small enough for CI: 24 hosts × 3 pages, latencies
// around 5 ms, a Crawl-delay of 1 s on every 7th host.
var small = Scenario{
	Hosts: 24, Pages: 3,
	Median: 5 * time.Millisecond, Sigma: 1.0, Min: time.Millisecond, Max: 100 * time.Millisecond,
	CrawlDelays: []int{1}, CrawlDelayEvery: 7,
	DegradeEvery: 10, Knee: 2, DegradeSlope: 3,
	Seed: 1,
}

// TestGuardPolite crawls the small slow web with colly and the Guard's
// defaults and judges it at the server: every page fetched, one request
// in flight per host, no request sooner than Crawl-delay after the end of
// the previous response, the degrading hosts below their knee.
func TestGuardPolite(t *testing.T) {
	site, err := NewSite(small, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	scraped, errs, err := Crawl(Guard, small, site.Addr)
	if err != nil {
		t.Fatal(err)
	}
	r := site.Result()
	want := small.Hosts * small.Pages
	if scraped != int64(want) || errs != 0 || r.Pages != want {
		t.Errorf("Crawl(guard): scraped %d, %d errors, site answered %d pages; want %d, 0, %d", scraped, errs, r.Pages, want, want)
	}
	if r.PeakInFlight != 1 {
		t.Errorf("Crawl(guard): peak in flight per host %d, want 1", r.PeakInFlight)
	}
	if r.CrawlDelayReq == 0 || r.Violations != 0 {
		t.Errorf("Crawl(guard): %d Crawl-delay violations in %d requests, want 0 in more than 0", r.Violations, r.CrawlDelayReq)
	}
	if r.Degrading == 0 || r.DegradeAbove != 0 {
		t.Errorf("Crawl(guard): %d of %d degrading hosts reached their knee, want 0 of more than 0", r.DegradeAbove, r.Degrading)
	}
}

// TestSiteSeesImpoliteness checks the judge: bare colly with two requests
// in flight per host and no Crawl-delay is seen doing both.
func TestSiteSeesImpoliteness(t *testing.T) {
	site, err := NewSite(small, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	if _, _, err := Crawl(CollyHost2, small, site.Addr); err != nil {
		t.Fatal(err)
	}
	r := site.Result()
	if r.PeakInFlight != 2 || r.Violations == 0 || r.DegradeAbove == 0 {
		t.Errorf("Crawl(colly-host2): peak %d, %d violations, %d degrading hosts at their knee; want 2, more than 0, more than 0",
			r.PeakInFlight, r.Violations, r.DegradeAbove)
	}
}

// TestScenarioBuild checks that the scenario is drawn as documented.
func TestScenarioBuild(t *testing.T) {
	hosts := Default.Build()
	if len(hosts) != Default.Hosts {
		t.Fatalf("Default.Build(): %d hosts, want %d", len(hosts), Default.Hosts)
	}
	var cd, deg, slow int
	for _, h := range hosts {
		if h.Base < Default.Min || h.Base > Default.Max {
			t.Errorf("Default.Build(): %s base %v, want in [%v, %v]", h.Name, h.Base, Default.Min, Default.Max)
		}
		if h.CrawlDelay > 0 {
			cd++
		}
		if h.Degrades {
			deg++
		}
		if h.Base >= time.Second {
			slow++
		}
	}
	if cd != 143 || deg != 100 || slow == 0 {
		t.Errorf("Default.Build(): %d Crawl-delay hosts, %d degrading, %d of 1 s or more; want 143, 100, some", cd, deg, slow)
	}
	if again := Default.Build(); again[500] != hosts[500] {
		t.Errorf("Default.Build() twice: host 500 %+v then %+v, want the same", hosts[500], again[500])
	}
}

// TestBound checks the bound of one host against its rules: with a
// Crawl-delay each request starts Crawl-delay after the previous end;
// with fast responses starts are 1 s apart; with slow ones the latency
// gap spaces them, unless FixedPace; a budget shorter than the crawl
// counts only the pages done within it.
func TestBound(t *testing.T) {
	one := func(lat time.Duration) Scenario {
		return Scenario{Hosts: 1, Pages: 3, Median: lat, Min: lat, Max: lat, Seed: 1}
	}
	tests := []struct {
		name       string
		sc         Scenario
		latencyGap bool
		budget     time.Duration
		lo, hi     time.Duration // Within
		pages      int
	}{
		// robots.txt + 3 pages, starts 1 s apart, the last one's ~10 ms.
		{"fast host", one(10 * time.Millisecond), true, time.Minute, 3 * time.Second, 3050 * time.Millisecond, 3},
		// Each response ~2 s, then ~2 s of latency gap: 3 gaps and 4 responses.
		{"slow host", one(2 * time.Second), true, time.Minute, 11 * time.Second, 22 * time.Second, 3},
		// FixedPace: each request starts as the previous one ends (no gap,
		// and 1 s between starts is shorter than a response): 4 responses.
		{"slow host, FixedPace", one(2 * time.Second), false, time.Minute, 5 * time.Second, 11 * time.Second, 3},
		// Only p0 (at about 1 s) is done by 1.5 s.
		{"budget", one(10 * time.Millisecond), true, 1500 * time.Millisecond, 1500 * time.Millisecond, 1500 * time.Millisecond, 1},
	}
	for _, tt := range tests {
		b := bound(tt.sc, tt.latencyGap, tt.budget)
		if b.Within < tt.lo || b.Within > tt.hi || b.Pages != tt.pages {
			t.Errorf("bound(%s): %d pages within %v, want %d within [%v, %v]", tt.name, b.Pages, b.Within, tt.pages, tt.lo, tt.hi)
		}
	}
	// A Crawl-delay of 3 s: 3 gaps of 3 s after each end, 4 responses of ~10 ms.
	sc := Scenario{Hosts: 4, Pages: 3, Median: 10 * time.Millisecond, Min: 10 * time.Millisecond, Max: 10 * time.Millisecond,
		CrawlDelays: []int{3}, CrawlDelayEvery: 7, Seed: 1} // host 3 has it
	if b := bound(sc, true, time.Minute); b.Slowest != "h0003.slow.test" || b.Full < 9*time.Second || b.Full > 9100*time.Millisecond {
		t.Errorf("bound(Crawl-delay 3 s): slowest %s done at %v, want h0003.slow.test at 9 … 9.1 s", b.Slowest, b.Full)
	}
}
