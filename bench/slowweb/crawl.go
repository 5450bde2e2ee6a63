package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// The crawlers the scenario is run with.
const (
	// CollyStar is bare colly with one rule for every host, as colly's
	// documentation shows it: LimitRule{DomainGlob: "*", Parallelism: 2,
	// Delay: 1 s}. A colly
	// rule is one slot set shared by every host it matches, so this is 2
	// requests in flight in all, not per host.
	CollyStar = "colly-star"
	// CollyHost2 is bare colly with one rule per host: Parallelism 2,
	// Delay 1 s, what the rule above is usually meant to be.
	CollyHost2 = "colly-host2"
	// CollyHost1 is bare colly with the Guard's per-host limits written by
	// hand: one rule per host, Parallelism 1, Delay max(1 s, the host's
	// Crawl-delay) — colly sleeps Delay after each response while holding
	// the slot, so that is Crawl-delay from the end of the response.
	CollyHost1 = "colly-host1"
	// Guard is colly with robotsmw.Attach() and its defaults.
	Guard = "guard"
	// CollyHost1Robots is CollyHost1 with colly's own robots.txt check on
	// (IgnoreRobotsTxt false): colly fetches robots.txt outside its
	// LimitRule slots and does not read Crawl-delay.
	CollyHost1Robots = "colly-host1-robots"
	// CollyHost1Txt is CollyHost1 reading robots.txt as the Guard does:
	// each host's first request is its /robots.txt, under the host's own
	// rule (so the Delay counts after it too), and its first page follows
	// it. colly does not parse it: the Delay is the scenario's Crawl-delay,
	// as in CollyHost1. These are the Guard's per-host limits with
	// FixedPace, robots.txt included.
	CollyHost1Txt = "colly-host1-txt"
	// CollyHost1Latency is CollyHost1Txt with the Guard's latency gap
	// written by hand too: each host's Delay is also at least its base
	// latency, which the scenario tells (the Guard learns it from the
	// responses). These are the Guard's default per-host limits.
	CollyHost1Latency = "colly-host1-latency"
	// GuardFixed is the Guard with FixedPace: its per-host limits are
	// CollyHost1's, plus 1 start/s and robots.txt.
	GuardFixed = "guard-fixedpace"
)

// Modes lists the crawlers in the order the table shows them.
var Modes = []string{CollyStar, CollyHost2, CollyHost1, CollyHost1Robots, CollyHost1Txt, CollyHost1Latency, GuardFixed, Guard}

// sameLimits names, for each Guard row, the bare colly row with its
// per-host limits, robots.txt included.
var sameLimits = map[string]string{GuardFixed: CollyHost1Txt, Guard: CollyHost1Latency}

// Crawl crawls every host of sc on the site at addr from its first page,
// with the crawler mode names, and returns the pages scraped and the
// errors colly reported.
func Crawl(mode string, sc Scenario, addr string) (scraped, errs int64, err error) {
	var d net.Dialer
	tr := &http.Transport{
		// Every host name is the loopback site: nothing else is dialed.
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     30 * time.Second,
	}
	c := colly.NewCollector(colly.Async())
	c.WithTransport(tr)
	c.SetRequestTimeout(30 * time.Second)
	hosts := sc.Build()
	switch mode {
	case CollyStar:
		err = c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 2, Delay: time.Second})
	case CollyHost2, CollyHost1, CollyHost1Robots, CollyHost1Txt, CollyHost1Latency:
		c.IgnoreRobotsTxt = mode != CollyHost1Robots
		for _, h := range hosts {
			r := &colly.LimitRule{DomainGlob: h.Name, Parallelism: 2, Delay: time.Second}
			switch mode {
			case CollyHost1Latency:
				r.Parallelism, r.Delay = 1, max(time.Second, h.CrawlDelay, h.Base)
			case CollyHost1, CollyHost1Robots, CollyHost1Txt:
				r.Parallelism, r.Delay = 1, max(time.Second, h.CrawlDelay)
			}
			if err = c.Limit(r); err != nil {
				break
			}
		}
	case Guard:
		robotsmw.Attach()(c)
	case GuardFixed:
		g := new(robotsmw.Guard)
		if err = fixedPace(g); err == nil {
			g.Attach(c)
		}
	default:
		err = fmt.Errorf("unknown crawler %q", mode)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("slowweb: %s: %w", mode, err)
	}
	var nScraped, nErrs atomic.Int64
	first := "/p0"
	if mode == CollyHost1Txt || mode == CollyHost1Latency {
		first = "/robots.txt"
		c.OnResponse(func(r *colly.Response) {
			if r.Request.URL.Path == "/robots.txt" {
				r.Request.Visit("/p0")
			}
		})
	}
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { e.Request.Visit(e.Attr("href")) })
	c.OnScraped(func(r *colly.Response) {
		if r.Request.URL.Path != "/robots.txt" {
			nScraped.Add(1)
		}
	})
	c.OnError(func(*colly.Response, error) { nErrs.Add(1) })
	for _, h := range hosts {
		c.Visit("http://" + h.Name + first)
	}
	c.Wait()
	return nScraped.Load(), nErrs.Load(), nil
}
