package robotsmw

import (
	"net/http"
	"runtime"
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

// collyCheckRobots is the function name of colly's robots.txt check, as
// runtime.Frame reports it.
const collyCheckRobots = "github.com/gocolly/colly/v2.(*Collector).checkRobots"

// maxCheckDepth is how many callers of RoundTrip are searched for
// collyCheckRobots. net/http calls RoundTrip four frames below it
// (Client.Do, Client.do, Client.send, send); the rest is room for
// wrappers.
const maxCheckDepth = 32

// isCollyCheck reports whether req is a robots.txt request of colly's own
// check. The path test comes first, so other requests never walk the
// stack.
func isCollyCheck(req *http.Request) bool {
	return req.URL.Path == "/robots.txt" && req.Method == http.MethodGet && calledByCollyCheck()
}

// calledByCollyCheck reports whether colly's robots.txt check is among the
// callers.
func calledByCollyCheck() bool {
	var pcs [maxCheckDepth]uintptr
	// Skip runtime.Callers and calledByCollyCheck.
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs[:])])
	for {
		f, more := frames.Next()
		if f.Function == collyCheckRobots {
			return true
		}
		if !more {
			return false
		}
	}
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
