package robotsmw

import (
	"net/http"

	"github.com/gocolly/colly/v2"
)

// colly's own robots.txt check (Collector.checkRobots) runs in Visit before
// any callback, whenever c.IgnoreRobotsTxt is false. NewCollector applies
// COLLY_IGNORE_ROBOTSTXT after its options, so that variable can turn the
// check back on after Attach turned it off, and no callback runs early
// enough to turn it off again. colly's check would then fetch robots.txt
// outside the Guard's pacing, and a URL it blocks would fail with
// colly.ErrRobotsTxtBlocked without ever reaching the Guard.
//
// The transport Attach installs (guardTransport) therefore answers colly's
// own robots.txt requests locally with an empty robots.txt. colly reads
// that as "allow all" (RFC 9309 §2.2.2: no rules, no restrictions), so its
// check never blocks and sends nothing; the Guard alone decides.
//
// colly's check is told apart by what its request carries, not by who
// calls: every request colly's scrape builds (Visit, Request, Post, Head,
// a queue's, a retry's, and their redirect hops, which keep the request's
// context) carries colly.CheckRevisitKey in its context, which colly's own
// redirect policy reads; the check's request is built with
// http.NewRequest, on context.Background, without it. See scrape and
// checkRobots in
// https://github.com/gocolly/colly/blob/v2.3.0/colly.go. The Guard's own
// robots.txt fetches never pass this transport (they go through
// pacedTransport to the transport below it). Should a colly release
// change either side, TestCollyCheckCriterion names which.

// isCollyCheck reports whether req is a robots.txt request of colly's own
// check: a GET of /robots.txt that colly's scrape did not build. The path
// test comes first, so other requests cost one string comparison.
func isCollyCheck(req *http.Request) bool {
	return req.URL.Path == "/robots.txt" && req.Method == http.MethodGet &&
		req.Context().Value(colly.CheckRevisitKey) == nil
}

// emptyRobots returns a 200 response to req with an empty text/plain
// body: a robots.txt without rules, which allows everything (RFC 9309
// §2.2.2; colly's parser reads it as allow-all).
func emptyRobots(req *http.Request) *http.Response {
	return &http.Response{
		Status:        "200 OK",
		StatusCode:    http.StatusOK,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"text/plain"}},
		Body:          http.NoBody,
		ContentLength: 0,
		Request:       req,
	}
}
