package robotsmw

import (
	"net/http"
	"reflect"
	"runtime"

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
// Attach therefore wraps the transport of colly's HTTP client with a
// collyRobotsTransport, which answers colly's own robots.txt requests
// locally with an empty robots.txt. colly reads that as "allow all" (RFC
// 9309 §2.2.2: no rules, no restrictions), so its check never blocks and
// sends nothing; the Guard alone decides.

// collyCheckRobots is the function name of colly's robots.txt check, as
// runtime.Frame reports it.
const collyCheckRobots = "github.com/gocolly/colly/v2.(*Collector).checkRobots"

// maxCheckDepth is how many callers of RoundTrip are searched for
// collyCheckRobots. net/http calls RoundTrip four frames below it
// (Client.Do, Client.do, Client.send, send); the rest is room for
// wrappers.
const maxCheckDepth = 32

// A collyRobotsTransport answers the robots.txt requests of colly's own
// check with an empty 200 response, sending nothing to the host, and
// passes every other request to next unchanged, a user's own requests for
// /robots.txt included. It is safe for concurrent use; it is not changed
// after it is installed.
type collyRobotsTransport struct {
	next http.RoundTripper // nil means http.DefaultTransport
}

// RoundTrip implements http.RoundTripper.
func (t *collyRobotsTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// The path test comes first, so other requests never walk the stack.
	if req.URL.Path == "/robots.txt" && req.Method == http.MethodGet && calledByCollyCheck() {
		if req.Body != nil {
			req.Body.Close() // RoundTrip must close the body, even on success
		}
		return emptyRobots(req), nil
	}
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(req)
}

// calledByCollyCheck reports whether colly's robots.txt check is among the
// callers of RoundTrip.
func calledByCollyCheck() bool {
	var pcs [maxCheckDepth]uintptr
	// Skip runtime.Callers, calledByCollyCheck and RoundTrip.
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs[:])])
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

// answerCollyRobots installs a collyRobotsTransport on c's HTTP client,
// around the transport the client has (a user's earlier WithTransport or
// SetProxyFunc is kept). A collector and its clones share one client, so a
// transport already wrapped is left alone: one wrapper serves them all, and
// attaching to a clone while the collector crawls writes nothing. If the
// client cannot be read, nothing is installed, and onRequest falls back to
// turning colly's check off.
func answerCollyRobots(c *colly.Collector) {
	hc := collyClient(c)
	if hc == nil {
		return
	}
	if _, ok := hc.Transport.(*collyRobotsTransport); ok {
		return
	}
	c.WithTransport(&collyRobotsTransport{next: hc.Transport})
}

// answersCollyRobots reports whether c's HTTP client still has the
// collyRobotsTransport installed by Attach; a later WithTransport,
// SetProxyFunc or SetClient replaces it.
func answersCollyRobots(c *colly.Collector) bool {
	hc := collyClient(c)
	if hc == nil {
		return false
	}
	_, ok := hc.Transport.(*collyRobotsTransport)
	return ok
}

// collyClient returns the *http.Client c sends its requests with, or nil
// if it cannot be read. colly offers no getter: the client is read from
// c's unexported backend by reflection (field types are checked first),
// and only read; it is changed through colly's own methods.
func collyClient(c *colly.Collector) *http.Client {
	v := reflect.ValueOf(c).Elem().FieldByName("backend")
	if !v.IsValid() || v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	v = v.Elem().FieldByName("Client")
	if !v.IsValid() || v.Type() != reflect.TypeFor[*http.Client]() || v.IsNil() {
		return nil
	}
	return (*http.Client)(v.UnsafePointer())
}
