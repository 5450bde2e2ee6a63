package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/robotsmw/robotsmw/netguard"
	"github.com/robotsmw/robotsmw/policy"
	"github.com/robotsmw/robotsmw/sitemap"
)

// serveAgent is the User-Agent of the page's live fetches, and the
// product token sitemap pages are checked for.
const serveAgent = "robotstxt"

// Bounds of a sitemap walk the page asks for.
const (
	maxServeSitemaps = 100 // sitemap files fetched
	maxServeReports  = 200 // sitemaps listed in the answer
)

// fetchClient returns the client of the page's live fetches: the run's,
// with dials that refuse loopback, private, link-local and other
// non-public addresses (netguard), checked on the resolved address,
// unless allowPrivate. The page must not turn the machine it runs on
// into a probe of its own network.
func (e *env) fetchClient(allowPrivate bool) *http.Client {
	var c http.Client
	if e.client != nil {
		c = *e.client
	}
	if !allowPrivate {
		c.Transport = netguard.Transport(nil)
	}
	return &c
}

// A fetchRequest asks for a site's live robots.txt (POST /api/fetch): URL
// is any URL of the site, or a host name.
type fetchRequest struct {
	URL string `json:"url"`
}

// A fetchResponse is the robots.txt as a crawl gets it: through a
// policy.Cache, with its status rules (RFC 9309 §2.3.1).
type fetchResponse struct {
	RobotsURL string `json:"robotsUrl"` // the origin's /robots.txt
	FinalURL  string `json:"finalUrl"`  // where its rules came from, after redirects
	Status    int    `json:"status"`    // of the last response; 0 if none
	State     string `json:"state"`     // "parsed", "unavailable" or "unreachable"
	Allows    string `json:"allows"`    // "rules", "everything" or "nothing"
	// Meaning says what RFC 9309 makes of the outcome.
	Meaning string `json:"meaning"`
	// Robots is the body when its rules apply; Cut is set when it reached
	// policy.MaxSize, past which nothing is read.
	Robots string `json:"robots"`
	Cut    bool   `json:"cut,omitempty"`

	status int // the HTTP status of the answer (httpStatus)
}

// httpStatus is the status /api/fetch answers with: 200 for a verdict,
// 403 for an address the dial guard refused, 502 for any other failure.
func (r *fetchResponse) httpStatus() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

func (s *server) fetch(ctx context.Context, req *fetchRequest) (*fetchResponse, error) {
	raw := strings.TrimSpace(req.URL)
	if raw != "" && !strings.Contains(raw, "://") {
		raw = "https://" + raw // a host name, as typed
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, badRequest("%q is not an http or https URL of a site", req.URL)
	}
	client, release := s.siteClient(ctx, u)
	defer release()
	rt, err := s.newFetcher(client).get(ctx, u)
	if err != nil {
		return nil, err // the request ended
	}
	resp := &fetchResponse{
		RobotsURL: robotsURL(u).String(), FinalURL: rt.name, Status: rt.status, State: rt.state.String(),
	}
	switch {
	case rt.err != nil:
		// RFC 9309 §2.3.1.4.
		resp.State, resp.Allows = policy.StateUnreachable.String(), "nothing"
		resp.status = http.StatusBadGateway
		if errors.Is(rt.err, netguard.ErrForbidden) {
			resp.status = http.StatusForbidden
		}
		resp.Meaning = fmt.Sprintf("unreachable (%s): a crawler must assume everything is disallowed until it can fetch robots.txt (RFC 9309 §2.3.1.4)",
			s.fetchProblem(rt.err))
	case rt.state == policy.StateUnavailable:
		// RFC 9309 §2.3.1.3.
		resp.Allows = "everything"
		why := "answered " + statusText(rt.status)
		if errors.Is(rt.whyAll, policy.ErrTooManyRedirects) {
			why = "redirected more than 5 times or in a loop"
		}
		resp.Meaning = why + ": there is no robots.txt, so everything is allowed (RFC 9309 §2.3.1.3)"
	default:
		resp.Allows = "rules"
		resp.Robots = string(rt.body)
		resp.Cut = len(rt.body) >= policy.MaxSize
		resp.Meaning = "answered " + statusText(rt.status) + ": its rules apply (RFC 9309 §2.3.1.1)"
		if rt.name != resp.RobotsURL {
			resp.Meaning += "; robots.txt redirected to " + rt.name + ", whose rules apply to " + resp.RobotsURL + " (RFC 9309 §2.3.1.2)"
		}
		if resp.Cut {
			resp.Meaning += fmt.Sprintf("; only its first %d KiB are read (RFC 9309 §2.5)", policy.MaxSize>>10)
		}
	}
	return resp, nil
}

// newFetcher returns a robots.txt fetcher of one API request.
func (s *server) newFetcher(client *http.Client) *fetcher {
	st := &store{m: make(map[string]policy.Record)}
	return &fetcher{
		store: st,
		cache: &policy.Cache{Client: client, UserAgent: serveAgent, Timeout: s.timeout, Store: st},
	}
}

// siteClient returns the client for fetches of the site the page's user
// typed. A server on loopback only serves the person at this machine, who
// named the site as the command line names one: its own addresses are
// allowed on its port, private or not, as the other commands allow the
// sites they are given (netguard.SiteTransport); its robots.txt redirects
// and sitemaps still reach no other non-public address or port. A server others can reach
// allows none, unless -allow-private.
// The caller calls release when the request is done.
func (s *server) siteClient(ctx context.Context, site *url.URL) (c *http.Client, release func()) {
	if s.allowPrivate || !s.loopbackOnly() {
		return s.client, func() {}
	}
	t, err := netguard.SiteTransport(ctx, site.String())
	if err != nil {
		return s.client, func() {}
	}
	sc := *s.client
	sc.Transport = t
	return &sc, t.CloseIdleConnections
}

// privateHint tells how to let fetches reach private addresses.
const privateHint = "; start robotstxt serve with -allow-private to fetch from private addresses"

// fetchProblem says why a fetch failed, with the flag that lifts the dial
// guard when it refused the address.
func (s *server) fetchProblem(err error) string {
	msg := describe(err, s.timeout)
	if errors.Is(err, netguard.ErrForbidden) {
		msg += privateHint
	}
	return msg
}

// A sitemapsRequest asks to fetch and count the sitemaps a robots.txt
// lists (POST /api/sitemaps), read as the robots.txt of Base's site.
type sitemapsRequest struct {
	Robots string `json:"robots"`
	Base   string `json:"base"`
}

// A sitemapsResponse counts what a sitemap.Walker found: totals and one
// report a sitemap file.
type sitemapsResponse struct {
	Sitemaps    int             `json:"sitemaps"`    // files read, indexes included
	Indexes     int             `json:"indexes"`     // of which indexes
	URLs        int             `json:"urls"`        // page URLs kept
	Failed      int             `json:"failed"`      // files that could not be read, or only in part
	Dropped     map[string]int  `json:"dropped"`     // page entries left out, by reason
	Skipped     map[string]int  `json:"skipped"`     // sitemaps not fetched, by reason
	Reports     []sitemapReport `json:"reports"`     // the first maxServeReports
	MoreReports int             `json:"moreReports"` // reports left out
	Error       string          `json:"error,omitempty"`
}

type sitemapReport struct {
	URL        string `json:"url"`
	Depth      int    `json:"depth"`
	Index      bool   `json:"index"`
	Pages      int    `json:"pages"`
	Children   int    `json:"children"`
	Disallowed bool   `json:"disallowed,omitempty"`
	Error      string `json:"error,omitempty"`
}

func (s *server) sitemaps(ctx context.Context, req *sitemapsRequest) (*sitemapsResponse, error) {
	if err := checkBody("robots", req.Robots); err != nil {
		return nil, err
	}
	base, err := url.Parse(strings.TrimSpace(req.Base))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Hostname() == "" {
		return nil, badRequest("base %q is not an absolute http or https URL of the site the robots.txt is for", req.Base)
	}
	client, release := s.siteClient(ctx, base)
	defer release()
	f := s.newFetcher(client)
	// The text is the site's robots.txt for the walk: its Sitemap lines
	// and rules, not the live file's.
	if err := f.store.seed(base, []byte(req.Robots)); err != nil {
		return nil, badRequest("base %q: %v", req.Base, err)
	}
	resp := &sitemapsResponse{Reports: []sitemapReport{}}
	w := &sitemap.Walker{
		Client:    client,
		Robots:    f.cache,
		UserAgent: serveAgent,
		Options: sitemap.Options{
			NoFallback:  true,
			MaxSitemaps: maxServeSitemaps,
			Timeout:     s.timeout,
			OnSitemap: func(r sitemap.SitemapReport) {
				if r.Index && r.Err == nil {
					resp.Indexes++
				}
				if len(resp.Reports) == maxServeReports {
					resp.MoreReports++
					return
				}
				rep := sitemapReport{URL: r.URL, Depth: r.Depth, Index: r.Index, Pages: r.Pages, Children: r.Children, Disallowed: r.Disallowed}
				if r.Err != nil {
					rep.Error = s.walkProblem(r.Err)
				}
				resp.Reports = append(resp.Reports, rep)
			},
		},
	}
	stats, err := w.Walk(ctx, base.String(), func(sitemap.Entry) error { return nil })
	var werr *sitemap.WalkError
	switch {
	case err == nil, errors.As(err, &werr):
	case ctx.Err() != nil:
		return nil, ctx.Err()
	default:
		resp.Error = s.fetchProblem(err)
	}
	resp.Sitemaps, resp.URLs, resp.Failed = stats.Sitemaps, stats.URLs, stats.Failed
	resp.Dropped, resp.Skipped = dropCounts(stats.Dropped), dropCounts(stats.Skipped)
	return resp, nil
}

// walkProblem describes a sitemap that failed, as the sitemaps command
// does, with the flag that lifts the dial guard when it refused the address.
func (s *server) walkProblem(err error) string {
	var fe *sitemap.FetchError
	if !errors.As(err, &fe) {
		return s.fetchProblem(err)
	}
	msg := walkErrText(fe, s.timeout)
	if errors.Is(err, netguard.ErrForbidden) {
		msg += privateHint
	}
	return msg
}

// dropCounts returns the non-zero counts of d by reason.
func dropCounts(d sitemap.Drops) map[string]int {
	m := map[string]int{}
	for name, n := range map[string]int{
		"scope": d.Scope, "filter": d.Filter, "robots": d.Robots,
		"duplicate": d.Duplicate, "limit": d.Limit, "invalid": d.Invalid,
	} {
		if n > 0 {
			m[name] = n
		}
	}
	return m
}
