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
