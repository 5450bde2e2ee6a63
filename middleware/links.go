package robotsmw

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/gocolly/colly/v2"
)

// ErrNotFollowed is wrapped by the *NotFollowedError that FollowLinks
// reports to ErrorHandler for a link it did not visit.
var ErrNotFollowed = errors.New("robotsmw: link not followed")

// A NotFollowedError reports a link FollowLinks did not visit, and why.
type NotFollowedError struct {
	URL    *url.URL // the link, resolved
	Page   *url.URL // the page it is on
	Reason string   // `page says nofollow (meta robots)`, `rel="nofollow"`, …
}

// Error implements error.
func (e *NotFollowedError) Error() string {
	return fmt.Sprintf("robotsmw: %s not followed from %s: %s", e.URL.Redacted(), e.Page.Redacted(), e.Reason)
}

// Unwrap returns ErrNotFollowed.
func (e *NotFollowedError) Unwrap() error { return ErrNotFollowed }

// Links configures FollowLinks and Directives. Its zero value honours
// nofollow pages and rel="nofollow" links.
type Links struct {
	// IgnoreDirectives makes FollowLinks follow every link, nofollow
	// pages and rel="nofollow" links included (robots.txt still applies
	// to each request).
	IgnoreDirectives bool
	// SkipUGC also leaves out links marked rel="ugc" (user-generated) or
	// rel="sponsored", which Google treats as hints like nofollow.
	SkipUGC bool
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
func (g *Guard) Directives(r *colly.Response) Directives {
	var head *goquery.Selection
	if isHTML(r) {
		if doc, err := goquery.NewDocumentFromReader(bytes.NewReader(headOf(r.Body))); err == nil {
			head = doc.Selection
		}
	}
	return ParseDirectives(g.responseAgent(r), headerOf(r), head)
}

// FollowLinks makes c visit the links of each HTML page it fetches (a
// and area elements with href, resolved against the page's <base href>),
// as the usual OnHTML("a[href]") callback does, unless the page's
// directives (Directives) say nofollow for the Guard's agent or the link
// is rel="nofollow" (and, with Links.SkipUGC, rel="ugc" or "sponsored").
// Each link left out is counted in Stats (NotFollowed) and reported to
// ErrorHandler with a *NotFollowedError giving the reason. Links.
// IgnoreDirectives turns both off.
//
// It reads colly's own parsed document: the page is not parsed twice. Call
// it once per collector, after Attach.
func (g *Guard) FollowLinks(c *colly.Collector) {
	c.OnHTML("html", func(e *colly.HTMLElement) { g.followLinks(e) })
}

func (g *Guard) followLinks(e *colly.HTMLElement) {
	page := e.Request.URL
	var pageReason string
	if !g.Links.IgnoreDirectives {
		d := ParseDirectives(g.responseAgent(e.Response), headerOf(e.Response), e.DOM.ChildrenFiltered("head"))
		if d.NoFollow {
			pageReason = "page says nofollow"
			if !ParseDirectives(g.responseAgent(e.Response), nil, e.DOM.ChildrenFiltered("head")).NoFollow {
				pageReason += " (X-Robots-Tag)"
			} else {
				pageReason += " (meta robots)"
			}
		}
	}
	e.DOM.Find("a[href], area[href]").Each(func(_ int, a *goquery.Selection) {
		href, _ := a.Attr("href")
		abs := e.Request.AbsoluteURL(href)
		if abs == "" {
			return
		}
		reason := pageReason
		if reason == "" && !g.Links.IgnoreDirectives {
			reason = g.relReason(a)
		}
		if reason == "" {
			e.Request.Visit(abs)
			return
		}
		u, err := url.Parse(abs)
		if err != nil {
			return
		}
		g.count(g.host(page), cNotFollowed)
		if g.ErrorHandler != nil {
			g.ErrorHandler(&colly.Request{URL: u, Method: "GET", Depth: e.Request.Depth + 1, Ctx: e.Request.Ctx},
				&NotFollowedError{URL: u, Page: page, Reason: reason})
		}
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

// maxHead bounds the bytes of a page searched for its <head>.
const maxHead = 256 << 10

// headOf returns the start of an HTML page up to its <body> (or </head>),
// where robots <meta> tags belong, or at most maxHead bytes of it.
func headOf(body []byte) []byte {
	b := body[:min(len(body), maxHead)]
	end := len(b)
	for _, tag := range [][]byte{[]byte("</head"), []byte("<body")} {
		if i := indexFold(b, tag); i >= 0 && i < end {
			end = i
		}
	}
	return b[:end]
}

// indexFold is bytes.Index ignoring ASCII case, for a lower-case sep.
func indexFold(b, sep []byte) int {
	for i := 0; i+len(sep) <= len(b); i++ {
		j := bytes.IndexByte(b[i:], '<')
		if j < 0 {
			return -1
		}
		i += j
		if i+len(sep) <= len(b) && bytes.EqualFold(b[i:i+len(sep)], sep) {
			return i
		}
	}
	return -1
}
