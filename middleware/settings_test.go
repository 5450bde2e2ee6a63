package robotsmw

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"
)

// Settings that would silently turn politeness off, or mean nothing, are
// refused by Attach and Transport with an error naming the field; zero
// values and the documented special values are accepted.
func TestGuardSettings(t *testing.T) {
	for _, tc := range []struct {
		g     *Guard
		field string // "" if valid
	}{
		{&Guard{}, ""},
		{&Guard{Rate: rate.Inf, MaxRetries: -1, Jitter: 1, InFlight: 4}, ""},
		{&Guard{Hosts: []HostRule{{Host: "*.example.com", Rate: rate.Inf, InFlight: 2}}}, ""},
		{&Guard{Rate: -5}, "Rate"},
		{&Guard{Rate: rate.Limit(math.NaN())}, "Rate"},
		{&Guard{Backoff: -time.Second}, "Backoff"},
		{&Guard{MaxBackoff: -time.Second}, "MaxBackoff"},
		{&Guard{MaxWait: -1}, "MaxWait"},
		{&Guard{IdleTimeout: -1}, "IdleTimeout"},
		{&Guard{MaxRobotsFailures: -1}, "MaxRobotsFailures"},
		{&Guard{InFlight: -1}, "InFlight"},
		{&Guard{MaxRobotsFetches: -1}, "MaxRobotsFetches"},
		{&Guard{Jitter: 1.5}, "Jitter"},
		{&Guard{Jitter: -0.1}, "Jitter"},
		{&Guard{Jitter: math.NaN()}, "Jitter"},
		{&Guard{Hosts: []HostRule{{Host: ""}}}, "Hosts[0].Host"},
		{&Guard{Hosts: []HostRule{{Host: "a.test"}, {Host: "[x"}}}, "Hosts[1].Host"},
		{&Guard{Hosts: []HostRule{{Host: "a.test", Rate: -1}}}, "Hosts[0].Rate"},
		{&Guard{Hosts: []HostRule{{Host: "http://a.test"}}}, "Hosts[0].Host"},
		{&Guard{Hosts: []HostRule{{Host: "a.test:8080"}}}, "Hosts[0].Host"},
		{&Guard{Hosts: []HostRule{{Host: "a.test", InFlight: -1}}}, "Hosts[0].InFlight"},
	} {
		err := tc.g.validate()
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("validate() = %v, want nil", err)
		case tc.field != "" && (!errors.Is(err, errSettings) || !strings.Contains(err.Error(), tc.field+" is")):
			t.Errorf("validate() with %s invalid = %v, want errSettings naming it", tc.field, err)
		}
		if tc.field == "" {
			continue
		}
		for _, call := range []struct {
			name string
			f    func(g *Guard)
		}{
			{"Attach", func(g *Guard) { g.Attach(colly.NewCollector()) }},
			{"Transport", func(g *Guard) { g.Transport(nil) }},
		} {
			g := &Guard{Rate: tc.g.Rate, Backoff: tc.g.Backoff, MaxBackoff: tc.g.MaxBackoff, MaxWait: tc.g.MaxWait,
				IdleTimeout: tc.g.IdleTimeout, MaxRobotsFailures: tc.g.MaxRobotsFailures, InFlight: tc.g.InFlight,
				MaxRobotsFetches: tc.g.MaxRobotsFetches, Jitter: tc.g.Jitter, Hosts: tc.g.Hosts}
			if p := panicOf(func() { call.f(g) }); p == nil || !strings.Contains(p.Error(), tc.field) {
				t.Errorf("%s with %s invalid panicked with %v, want the field named", call.name, tc.field, p)
			}
		}
	}
}

// A nil collector is refused with a message, not a nil dereference.
func TestNilCollector(t *testing.T) {
	g := &Guard{}
	if p := panicOf(func() { g.Attach(nil) }); p == nil || !strings.Contains(p.Error(), "collector is nil") {
		t.Errorf("Attach(nil) panicked with %v, want a message that the collector is nil", p)
	}
	if _, err := g.Seed(nil, "http://example.test/"); err == nil || !strings.Contains(err.Error(), "collector is nil") {
		t.Errorf("Seed(nil, ...) = %v, want an error that the collector is nil", err)
	}
}

// panicOf runs f and returns what it panicked with, as an error; nil if
// it did not panic.
func panicOf(f func()) (err error) {
	defer func() {
		switch p := recover().(type) {
		case nil:
		case error:
			err = p
		default:
			err = fmt.Errorf("%v", p)
		}
	}()
	f()
	return nil
}

// A second Attach of a Guard to the same collector changes nothing: its
// callbacks run once per request, and the crawl goes on as with one.
func TestAttachTwice(t *testing.T) {
	s := newSite(t, robots("User-agent: *\nDisallow: /private\n", nil))
	g := &Guard{Rate: rate.Inf}
	var errs []error
	c := colly.NewCollector(g.Attach, colly.Async())
	g.Attach(c)
	c.OnError(func(_ *colly.Response, err error) { errs = append(errs, err) })
	for _, p := range []string{"/a", "/b", "/private/x"} {
		c.Visit(s.URL + p)
	}
	waitOrFail(t, "Wait", c.Wait)
	for _, p := range []string{"/a", "/b"} {
		if n := s.count(p); n != 1 {
			t.Errorf("server saw %s %d times, want 1", p, n)
		}
	}
	if len(errs) != 1 || !errors.Is(errs[0], ErrDisallowed) {
		t.Errorf("OnError got %v, want one ErrDisallowed", errs)
	}
	var nilGuard *Guard
	if p := panicOf(func() { colly.NewCollector(nilGuard.Attach) }); p == nil || !strings.Contains(p.Error(), "Guard is nil") {
		t.Errorf("Attach on a nil *Guard panicked with %v, want a message", p)
	}
	if GuardOf(nil) != nil {
		t.Errorf("GuardOf(nil) != nil")
	}
}

// With the Guard's transport replaced after Attach, a request the
// callbacks do not admit still reaches OnError (colly reports an aborted
// request nowhere, so the Guard does).
func TestAbortedOutcomeReachesOnError(t *testing.T) {
	s := newSite(t, robots("User-agent: *\nDisallow: /private\n", nil))
	g := &Guard{Rate: rate.Inf}
	c := colly.NewCollector(g.Attach)
	c.WithTransport(&http.Transport{})
	var errs []error
	c.OnError(func(_ *colly.Response, err error) { errs = append(errs, err) })
	c.Visit(s.URL + "/private/x")
	if len(errs) != 1 || !errors.Is(errs[0], ErrDisallowed) || !IsFinal(errs[0]) {
		t.Errorf("OnError got %v, want one final ErrDisallowed", errs)
	}
	if n := s.count("/private/x"); n != 0 {
		t.Errorf("server saw /private/x %d times, want 0", n)
	}
}
