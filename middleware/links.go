package robotsmw

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"

	"github.com/robotsmw/robotsmw/directives"

	"github.com/PuerkitoBio/goquery"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	"golang.org/x/net/html"
)

// A NotFollowedError reports a link FollowLinks did not visit, and why, to
// ErrorHandler: it is no outcome of a request (the link was never
// requested), so it wraps none of the outcome sentinels; tell it apart
// with errors.As.
type NotFollowedError struct {
	URL    *url.URL // the link, resolved
	Page   *url.URL // the page it is on
	Reason string   // `page says nofollow (meta robots)`, `rel="nofollow"`, …
}

// Error implements error.
func (e *NotFollowedError) Error() string {
	return fmt.Sprintf("robotsmw: %s not followed from %s: %s", e.URL.Redacted(), e.Page.Redacted(), e.Reason)
}

// Links configures FollowLinks. Its zero value honours nofollow pages and
// rel="nofollow" links.
type Links struct {
	// SkipUGC also leaves out links marked rel="ugc" (user-generated) or
	// rel="sponsored", which Google treats as hints like nofollow.
	SkipUGC bool
	// Queue, if set, is the storage of the colly queue that runs the
	// collector (what was passed to queue.New: a Fleet's Queue, or a
	// queue.InMemoryQueueStorage), and receives the links FollowLinks
	// follows, each one level deeper than its page, instead of the page's
	// collector visiting them: the queue's threads stay free, and a queue
	// shared by a fleet (package redisstore) spreads the links over its
	// members. Links to hosts outside the collector's AllowedDomains are
	// left out, as its Visit would refuse them. A link the storage refuses
	// (colly.ErrQueueFull) is reported like a link not followed, with the
	// storage's error as the reason.
	//
	// The links go to the storage, not through Queue.AddRequest: colly
	// v2.3.0's AddRequest blocks for ever when it is called after the
	// queue's Run has returned, as it is for a page the Guard sends again
	// after a deferral. Do not call Queue.AddRequest from callbacks either;
	// Queue.AddURL, which goes to the storage too, is safe. A running queue
	// finds the links once one of its requests completes.
	Queue queue.Storage
}

// Directives returns the page-level robots directives of r for the Guard's
// agent (Guard.Agent, else the request's User-Agent): its X-Robots-Tag
// header fields and, for an HTML page, the robots <meta> tags of its
// <head>, which is parsed on its own (a few kilobytes, not the page). It
// can be called from any callback, OnResponse included (which colly runs
// before OnHTML).
//
// colly shares one Ctx between a page and the requests made from it, so
// directives are never kept in Ctx, where a page's nofollow would leak to
// the pages it links to: they are read from the response itself each time.
func (g *Guard) Directives(r *colly.Response) directives.Page {
	var head *goquery.Selection
	if isHTML(r) {
		if doc, err := goquery.NewDocumentFromReader(bytes.NewReader(headOf(r.Body))); err == nil {
			head = doc.Selection
		}
	}
	return directives.Parse(g.responseAgent(r), headerOf(r), head)
}

// FollowLinks makes c visit the links of each HTML page it fetches (a
// and area elements with href, resolved against the page's <base href>),
// as the usual OnHTML("a[href]") callback does, unless the page's
// directives (Directives) say nofollow for the Guard's agent or the link
// is rel="nofollow" (and, with Links.SkipUGC, rel="ugc" or "sponsored").
// Each link left out is counted in Stats (NotFollowed) and reported to
// ErrorHandler with a *NotFollowedError giving the reason, and a
// *colly.Request that was never sent (no collector; the page request's
// headers); to follow every link whatever the page says, use colly's own
// OnHTML("a[href]") instead (robots.txt still applies). A link colly
// refuses for want of room (MaxRequests reached: colly.ErrMaxRequests, or
// colly.ErrQueueFull) is counted and reported the same way, with colly's
// reason; one it refuses by the crawl's own scope (visited already,
// AllowedDomains, URL filters, MaxDepth) is not, as the usual callback
// does not. Links that are not
// http or https URLs (javascript:, mailto:) are skipped silently, and
// fragments are dropped, so anchors of one page make one request.
//
// It reads colly's own parsed document: the page is not parsed twice. Call
// it once per collector, after Attach.
func (g *Guard) FollowLinks(c *colly.Collector) {
	c.OnHTML("html", func(e *colly.HTMLElement) { g.followLinks(c, e) })
}

func (g *Guard) followLinks(c *colly.Collector, e *colly.HTMLElement) {
	page := e.Request.URL
	// The meta tags and the header fields apart, each read once, so that
	// the reason names the one that said nofollow.
	var pageReason string
	agent := g.responseAgent(e.Response)
	switch {
	case directives.Parse(agent, nil, e.DOM.ChildrenFiltered("head")).NoFollow:
		pageReason = "page says nofollow (meta robots)"
	case directives.Parse(agent, headerOf(e.Response), nil).NoFollow:
		pageReason = "page says nofollow (X-Robots-Tag)"
	}
	e.DOM.Find("a[href], area[href]").Each(func(_ int, a *goquery.Selection) {
		href, _ := a.Attr("href")
		if strings.TrimSpace(href) == "" {
			return
		}
		u, err := url.Parse(e.Request.AbsoluteURL(href))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return // javascript:, mailto:, tel: and the like are no pages
		}
		u.Fragment, u.RawFragment = "", "" // one page, however many anchors
		reason := pageReason
		if reason == "" {
			reason = g.relReason(a)
		}
		if q := g.Links.Queue; reason == "" && q == nil {
			// colly's refusals are its sentinels as they are: a
			// synchronous collector's Visit also returns the outcome of
			// a request it sent, which may wrap them (a retry refused).
			err := e.Request.Visit(u.String())
			if err != colly.ErrMaxRequests && err != colly.ErrQueueFull {
				return
			}
			if seen, _ := c.HasVisited(u.String()); seen {
				return // colly checks MaxRequests before the visited set
			}
			reason = "colly refused it: " + err.Error()
		} else if reason == "" {
			if !allowedDomain(c, u) {
				return
			}
			err := enqueue(q, u, e.Request.Depth+1)
			if err == nil {
				return
			}
			reason = "queue refused it: " + err.Error()
		}
		// The request that was not made: never sent, it carries the page
		// request's headers for handlers that read them. Its outcome is
		// final, and colly reports it nowhere.
		hdr := e.Request.Headers.Clone()
		g.deliver(c, &colly.Request{URL: u, Method: "GET", Depth: e.Request.Depth + 1, Ctx: e.Request.Ctx, Headers: &hdr},
			nil, &NotFollowedError{URL: u, Page: page, Reason: reason}, false)
	})
}

// relReason returns why a link's rel attribute keeps it from being
// followed, or "".
func (g *Guard) relReason(a *goquery.Selection) string {
	rel, ok := a.Attr("rel")
	if !ok {
		return ""
	}
	for _, v := range strings.Fields(strings.ToLower(rel)) {
		switch {
		case v == "nofollow":
			return `rel="nofollow"`
		case g.Links.SkipUGC && (v == "ugc" || v == "sponsored"):
			return `rel="` + v + `"`
		}
	}
	return ""
}

// responseAgent returns the agent directives are read for.
func (g *Guard) responseAgent(r *colly.Response) string {
	if g.Agent != "" {
		return g.Agent
	}
	if r.Request != nil && r.Request.Headers != nil {
		return r.Request.Headers.Get("User-Agent")
	}
	return ""
}

func headerOf(r *colly.Response) map[string][]string {
	if r.Headers == nil {
		return nil
	}
	return *r.Headers
}

// isHTML reports whether r holds an HTML page.
func isHTML(r *colly.Response) bool {
	if r.Headers != nil {
		if ct := strings.ToLower(r.Headers.Get("Content-Type")); ct != "" {
			return strings.Contains(ct, "html")
		}
	}
	return bytes.HasPrefix(bytes.TrimSpace(r.Body), []byte("<"))
}

// headOf returns the start of an HTML page up to where its <head> ends
// (its </head>, or the first tag that belongs to the body), where robots
// <meta> tags belong. It tokenizes the page, so a "<body" inside a comment
// or a script does not end the head early.
func headOf(body []byte) []byte {
	z := html.NewTokenizer(bytes.NewReader(body))
	off := 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return body
		}
		raw := len(z.Raw())
		if tt == html.StartTagToken || tt == html.EndTagToken || tt == html.SelfClosingTagToken {
			name, _ := z.TagName()
			switch string(name) {
			case "html", "head", "meta", "title", "base", "link", "script", "style", "noscript", "template":
				if tt == html.EndTagToken && string(name) == "head" {
					return body[:off]
				}
			default:
				return body[:off] // a body element: the head has ended
			}
		}
		off += raw
	}
}

// allowedDomain reports whether u's host is one of c's AllowedDomains, or
// c sets none (colly's own rule in Visit).
func allowedDomain(c *colly.Collector, u *url.URL) bool {
	if len(c.AllowedDomains) == 0 {
		return true
	}
	host := u.Hostname()
	for _, d := range c.AllowedDomains {
		if d == host {
			return true
		}
	}
	return false
}

// enqueue adds a GET of u at depth to the queue storage q.
func enqueue(q queue.Storage, u *url.URL, depth int) error {
	b, err := (&colly.Request{URL: u, Method: "GET", Depth: depth}).Marshal()
	if err != nil {
		return err
	}
	return q.AddRequest(b)
}
