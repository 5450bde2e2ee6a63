// Package http2 names the transport the Guard installs under colly's HTTP
// client so that net/http's client takes it for a transport it knows. It
// is not an HTTP/2 implementation: its Transport passes each request on,
// and nothing else.
//
// With a Timeout (colly's request timeout: 10 s unless set), net/http's
// Client gives each request through a RoundTripper it does not know a
// Cancel channel, a timer and a goroutine that closes the channel when the
// timer fires, and http.Transport watches such a channel with a goroutine
// of its own: two goroutines, a timer and about a dozen allocations per
// request, to cancel transports written before requests had contexts. For
// an http.Transport, and for a RoundTripper whose type is named
// "*http2.Transport" (golang.org/x/net/http2's; knownRoundTripperImpl in
// net/http's client.go), it puts the deadline on the request's context
// alone. The Guard's transport honours the context (it passes it on with
// the request, which every transport of net/http and x/net honours), so it
// goes under this name. Should net/http drop the heuristic, requests take
// the general path again: slower, no different.
package http2

import "net/http"

// A Transport passes each request to Next. It is safe for concurrent use
// if Next is; Next must not be changed once it is in use.
type Transport struct {
	Next http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	return t.Next.RoundTrip(r)
}
