package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/robotsmw/robotsmw/policy"
	"github.com/robotsmw/robotsmw/sitemap"
)

// A summaryRequest asks what a robots.txt holds (POST /api/summary). The
// URLs and agents are the page's test cases: the summary says which group
// each agent gets. Base is the URL the file stands for (its robots.txt or
// any page of the site), against which relative Sitemap lines resolve;
// when empty, the first absolute test URL's site is used.
type summaryRequest struct {
	Robots string   `json:"robots"`
	URLs   []string `json:"urls"`
	Agents []string `json:"agents"`
	Base   string   `json:"base"`
}

type summaryResponse struct {
	Groups      []groupSummary `json:"groups"`
	Agents      []agentSummary `json:"agents"`
	CleanParams []cleanParam   `json:"cleanParams"`
	// Canonicals are the test URLs that Clean-param lines change, with
	// their canonical form (policy.Robots.Canonical).
	Canonicals []canonicalURL   `json:"canonicals"`
	Sitemaps   []sitemapSummary `json:"sitemaps"`
	// RobotsURL is the robots.txt URL the Sitemap lines resolved against,
	// "" when there was none.
	RobotsURL string `json:"robotsUrl"`
}

// A groupSummary is a policy.Group with what the Guard makes of its
// Crawl-delay.
type groupSummary struct {
	Agent      string     `json:"agent"`
	Lines      []int      `json:"lines"` // its User-agent lines
	Rules      []ruleJSON `json:"rules"`
	CrawlDelay *float64   `json:"crawlDelay,omitempty"` // seconds, when set
	Guard      string     `json:"guard"`
}

// An agentSummary says which group applies to a test agent.
type agentSummary struct {
	Agent string `json:"agent"`
	Token string `json:"token"`
	Group string `json:"group"` // the group's agent, "" for none
}

// A canonicalURL is a test URL and its canonical form: without the query
// parameters that the Clean-param lines applying to its path name.
type canonicalURL struct {
	URL       string `json:"url"`
	Canonical string `json:"canonical"`
}

type cleanParam struct {
	Line   int      `json:"line"`
	Params []string `json:"params"`
	Path   string   `json:"path"`
}

// A sitemapSummary is one Sitemap line, resolved against the robots.txt
// URL; Problem says why it was left out when Resolved is empty.
type sitemapSummary struct {
	Value    string `json:"value"`
	Resolved string `json:"resolved,omitempty"`
	Problem  string `json:"problem,omitempty"`
}

func (s *server) summary(_ context.Context, req *summaryRequest) (*summaryResponse, error) {
	if err := checkBody("robots", req.Robots); err != nil {
		return nil, err
	}
	cases, err := newTestCases(req.URLs, req.Agents)
	if err != nil {
		return nil, err
	}
	base, err := summaryBase(req.Base, cases)
	if err != nil {
		return nil, err
	}
	r := policy.Parse([]byte(req.Robots))
	resp := &summaryResponse{
		Groups: []groupSummary{}, Agents: []agentSummary{}, CleanParams: []cleanParam{}, Canonicals: []canonicalURL{},
		Sitemaps: []sitemapSummary{},
	}
	for _, g := range r.Groups() {
		gs := groupSummary{Agent: g.Agent, Lines: g.Lines, Rules: []ruleJSON{}, Guard: guardDelay(g.CrawlDelay, g.HasCrawlDelay)}
		for _, rl := range g.Rules {
			gs.Rules = append(gs.Rules, toRuleJSON(rl))
		}
		if g.HasCrawlDelay {
			secs := g.CrawlDelay.Seconds()
			gs.CrawlDelay = &secs
		}
		resp.Groups = append(resp.Groups, gs)
	}
	for i, a := range cases.agents {
		// The group of an agent does not depend on the URL.
		d := r.Explain(cases.tokens[i], &url.URL{Path: "/"})
		resp.Agents = append(resp.Agents, agentSummary{Agent: a, Token: cases.tokens[i], Group: d.Agent})
	}
	for _, cp := range r.CleanParams() {
		resp.CleanParams = append(resp.CleanParams, cleanParam{Line: cp.Line, Params: cp.Params, Path: cp.Path})
	}
	for i, u := range cases.parsed {
		if u == nil {
			continue
		}
		if c := r.Canonical(u); c.String() != u.String() {
			resp.Canonicals = append(resp.Canonicals, canonicalURL{URL: cases.urls[i], Canonical: c.String()})
		}
	}
	if base != nil {
		resp.RobotsURL = base.String()
	}
	for _, line := range r.Sitemaps() {
		resp.Sitemaps = append(resp.Sitemaps, resolveSitemap(base, line))
	}
	return resp, nil
}

// summaryBase returns the robots.txt URL relative Sitemap lines resolve
// against: that of base, else that of the first absolute test URL; nil
// when there is neither.
func summaryBase(base string, cases *testCases) (*url.URL, error) {
	if base = strings.TrimSpace(base); base != "" {
		u, err := url.Parse(base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			return nil, badRequest("base %q is not an absolute http or https URL with a host", base)
		}
		if u.Path == "/robots.txt" || strings.HasSuffix(u.Path, "/robots.txt") {
			return u, nil // as fetched, perhaps after redirects
		}
		return robotsURL(u), nil
	}
	for _, u := range cases.parsed {
		if u != nil && u.IsAbs() {
			return robotsURL(u), nil
		}
	}
	return nil, nil
}

// resolveSitemap resolves one Sitemap line as sitemap.FromRobots does.
func resolveSitemap(base *url.URL, line string) sitemapSummary {
	sm := sitemapSummary{Value: line}
	if got := sitemap.FromRobots(base, []string{line}); len(got) > 0 {
		sm.Resolved = got[0]
		return sm
	}
	ref, err := url.Parse(strings.TrimSpace(line))
	if base == nil && err == nil && ref.Scheme == "" && ref.Host == "" {
		sm.Problem = "relative: give a URL of the site (a test URL, or fetch it live) to resolve it"
	} else {
		sm.Problem = "not an http or https URL: crawlers leave it out"
	}
	return sm
}

// The Guard's defaults that guardDelay describes: the interval of its
// default Rate (one request per second, as Guard.Rate documents it; not
// imported, so that the command does not link colly for a number) and
// the longest Crawl-delay it honours.
const (
	guardRateInterval  = time.Second
	guardMaxCrawlDelay = policy.MaxCrawlDelay
)

// guardDelay says what the middleware's Guard, with its defaults, does
// with a group's Crawl-delay (RFC 9309 does not define Crawl-delay; Google
// ignores it, Bing and Yandex honour it).
func guardDelay(d time.Duration, set bool) string {
	floor := guardRateInterval
	switch {
	case !set:
		return fmt.Sprintf("no Crawl-delay: the Guard sends one request at a time to the host, starts them at most one every %v (its default Rate), and after each response rests at least as long as the host took to answer", floor)
	case d > guardMaxCrawlDelay:
		return fmt.Sprintf("more than %v: the Guard does not crawl the host (ErrCrawlDelayTooLong), or waits %v after each response with ClampCrawlDelay",
			guardMaxCrawlDelay, guardMaxCrawlDelay)
	case d <= floor:
		return fmt.Sprintf("the Guard waits %v after the end of each response before the next request to the host (the Crawl-delay), one request at a time, and starts them at most one every %v (its default Rate)", d, floor)
	}
	return fmt.Sprintf("the Guard waits %v after the end of each response before the next request to the host (the Crawl-delay, counted from the end as Yandex defines it), one request at a time", d)
}
