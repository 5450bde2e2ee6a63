package robotsmw

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"
)

// stallOnce returns a site whose /slow stalls once, before its headers or
// in its body, until the request is cut (or failsafe), and answers 200
// after that.
func stallOnce(t *testing.T, inBody bool) *site {
	var n atomic.Int32
	return newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/slow" || n.Add(1) != 1 {
			return false
		}
		if inBody {
			w.Header().Set("Content-Length", "100")
			w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-time.After(failsafe):
		}
		return true
	}))
}

// A request that runs out of colly's request timeout reaches the user's
// OnError as the Guard's outcome (a *DeferredError: it will be retried),
// never as net/http's timeout text, whether the timeout was set before
// Attach (the Guard's transport enforces it) or after (net/http does, and
// the Guard ends the request a little earlier), and whether the request
// stalls before its headers or in its body.
//
// A synchronous collector retries in place, inside the client's call
// (inplace.go): set after Attach, net/http's timeout bounds that whole
// call, which the stalled attempt used up, so the retry is not sent and
// the request gives up with the Guard's error naming the client's
// timeout, at once: no *DeferredError is reported first, which would
// promise a retry. An asynchronous collector's retry is a call of its own.
func TestRequestTimeoutOutcome(t *testing.T) {
	for _, tc := range []struct {
		name                string
		before, body, async bool
		want                string
	}{
		{"timeout before Attach, stalled headers", true, false, false, "retry 1, ok 200"},
		{"timeout before Attach, stalled body", true, true, false, "retry 1, ok 200"},
		{"timeout after Attach, stalled headers", false, false, false, "gave up"},
		{"timeout after Attach, stalled body", false, true, false, "gave up"},
		{"async, timeout after Attach, stalled headers", false, false, true, "retry 1, ok 200"},
		{"async, timeout after Attach, stalled body", false, true, true, "retry 1, ok 200"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := stallOnce(t, tc.body)
			g := &Guard{Rate: rate.Inf, Backoff: 30 * time.Millisecond}
			c := colly.NewCollector(colly.Async(tc.async))
			if tc.before {
				c.SetRequestTimeout(time.Second)
				g.Attach(c)
				if got := collyClient(c).Timeout; got != 0 {
					t.Errorf("client Timeout after Attach = %v, want 0 (the transport enforces it)", got)
				}
				if got := clientTimeout(c); got != time.Second {
					t.Errorf("clientTimeout = %v, want 1s", got)
				}
			} else {
				g.Attach(c)
				c.SetRequestTimeout(time.Second)
			}
			var log outcomeLog
			log.attach(c)
			var first, final error
			c.OnError(func(_ *colly.Response, err error) {
				if first == nil {
					first = err
				}
				if IsFinal(err) {
					final = err
				}
			})
			c.Visit(s.URL + "/slow")
			waitOrFail(t, "Wait", c.Wait)
			if got := log.get("/slow"); got != tc.want {
				t.Errorf("Visit(/slow) outcomes %q, want %q", got, tc.want)
			}
			if tc.before && (!errors.Is(first, context.DeadlineExceeded) ||
				!strings.Contains(fmt.Sprint(first), "not done within 1s (the collector's request timeout)")) {
				t.Errorf("first outcome %v, want a deadline naming the collector's request timeout", first)
			}
			if tc.want == "gave up" && !strings.Contains(fmt.Sprint(final), "the client's timeout ends at") {
				t.Errorf("final outcome %v, want the Guard's, naming the client's timeout", final)
			}
		})
	}
}

// A WithTransport after Attach replaces the Guard's transport, which held
// the client's Timeout: the client gets it back before it sends the next
// request, so a stalled request still ends.
func TestTimeoutGivenBack(t *testing.T) {
	s := stallOnce(t, false)
	c := colly.NewCollector()
	c.SetRequestTimeout(300 * time.Millisecond)
	g := &Guard{Rate: rate.Inf}
	g.Attach(c)
	c.WithTransport(http.DefaultTransport)
	done := make(chan error, 1)
	go func() { done <- c.Visit(s.URL + "/slow") }()
	select {
	case err := <-done:
		var ne interface{ Timeout() bool }
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("Visit(/slow) = %v, want the client's timeout", err)
		}
	case <-time.After(failsafe):
		t.Fatal("Visit(/slow) did not end: the client lost its Timeout")
	}
	if got := collyClient(c).Timeout; got != 300*time.Millisecond {
		t.Errorf("client Timeout = %v, want 300ms back", got)
	}
}

// A clone the Guard was not attached to shares the client, whose Timeout
// the Guard's transport took over: the transport admits its requests
// itself and bounds them by that Timeout, body included, and the body is
// read in full (it used to be cut at once with context.Canceled).
func TestCloneBodyUnderTakenTimeout(t *testing.T) {
	body := strings.Repeat("x", 4<<20) // more than the transport buffers
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/big" {
			return false
		}
		w.Write([]byte(body))
		return true
	}))
	c := colly.NewCollector()
	c.SetRequestTimeout(5 * time.Second)
	(&Guard{Rate: rate.Inf}).Attach(c)
	d := c.Clone()
	var got int
	d.OnResponse(func(r *colly.Response) { got = len(r.Body) })
	if err := d.Visit(s.URL + "/big"); err != nil {
		t.Errorf("clone's Visit(/big) = %v, want nil", err)
	}
	if got != len(body) {
		t.Errorf("clone's OnResponse(/big) got %d bytes, want %d", got, len(body))
	}
}
