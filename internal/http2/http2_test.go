package http2

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// net/http's client bounds a request through a Transport by its Timeout
// on the request's context alone: no Cancel channel (and no timer and
// goroutines to close it), as for a transport it knows. If this fails,
// net/http changed its heuristic: the Guard still works, at the cost this
// package avoids.
func TestClientKnowsTransport(t *testing.T) {
	stop := errors.New("http2 test: seen")
	var cancel <-chan struct{}
	var deadline bool
	rt := &Transport{Next: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		//lint:ignore SA1019 the test reads the deprecated field to see that net/http no longer sets it
		cancel = r.Cancel
		_, deadline = r.Context().Deadline()
		return nil, stop
	})}
	c := &http.Client{Transport: rt, Timeout: time.Hour}
	if _, err := c.Get("http://127.0.0.1:1/"); !errors.Is(err, stop) {
		t.Fatalf("Get: %v, want the transport's error", err)
	}
	if !deadline {
		t.Error("Get: the request's context has no deadline, want the client's Timeout")
	}
	if cancel != nil {
		t.Error("Get: the request has a Cancel channel, want none (the client does not know the transport)")
	}
}
