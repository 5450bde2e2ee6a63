package robotsmw

import (
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/policy"
)

// A host's memo answers as freshEntry says of its entry, for the origin
// and cache it was made for only.
func TestRobotsMemo(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cache, other := &policy.Cache{}, &policy.Cache{}
	robots := policy.Parse([]byte("User-agent: *\nDisallow: /private\n"))
	u := mustURL(t, "http://a.test:8080/page")
	for _, tc := range []struct {
		name string
		e    policy.Entry
	}{
		{"parsed", policy.Entry{State: policy.StateParsed, Expires: now.Add(time.Hour)}},
		{"unavailable", policy.Entry{State: policy.StateUnavailable, Expires: now.Add(time.Hour)}},
		{"expired", policy.Entry{State: policy.StateParsed, Expires: now.Add(-time.Second)}},
		{"expiring now", policy.Entry{State: policy.StateParsed, Expires: now}},
		{"unreachable", policy.Entry{State: policy.StateUnreachable, Expires: now.Add(time.Hour)}},
		{"unreachable, stale copy", policy.Entry{State: policy.StateUnreachable, Stale: true, Expires: now.Add(time.Hour)}},
		{"no expiry", policy.Entry{State: policy.StateParsed}},
	} {
		tc.e.Robots = robots
		h := newHost("a.test", 0, now.UnixNano())
		m := h.remember(cache, u, tc.e, "robotsmw")
		want := freshEntry(tc.e, now)
		got, ok := h.memo(cache, u, now)
		if ok != want || ok && (got != m || got.e.Robots != robots) {
			t.Errorf("%s: memo(same origin) = %p, %v; want %v (the memo %p)", tc.name, got, ok, want, m)
		}
		for _, v := range []string{"https://a.test:8080/page", "http://a.test/page", "http://A.test:8080/page"} {
			if _, ok := h.memo(cache, mustURL(t, v), now); ok {
				t.Errorf("%s: memo(%s) answers for http://a.test:8080", tc.name, v)
			}
		}
		if _, ok := h.memo(other, u, now); ok {
			t.Errorf("%s: memo through another cache answers", tc.name)
		}
	}
}

// A memo is one agent's: its Matcher and the Crawl-delay applied under
// it. Applying another agent's Crawl-delay makes it that agent's.
func TestRobotsMemoAgent(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cache := &policy.Cache{}
	robots := policy.Parse([]byte("User-agent: *\nDisallow: /private\n\nUser-agent: other\nDisallow: /\n"))
	u, private := mustURL(t, "http://a.test/page"), mustURL(t, "http://a.test/private/x")
	h := newHost("a.test", 0, now.UnixNano())
	m := h.remember(cache, u, policy.Entry{State: policy.StateParsed, Expires: now.Add(time.Hour), Robots: robots}, "robotsmw")
	if _, ok := m.delayFor("robotsmw"); ok {
		t.Errorf("delayFor(robotsmw) of a new memo: applied, want not yet")
	}
	if !m.allowed(robots, "robotsmw", u) || m.allowed(robots, "robotsmw", private) {
		t.Errorf("allowed(robotsmw): want /page allowed and /private/x not")
	}
	h.applied(m, "other", time.Second)
	next, _ := h.memo(cache, u, now)
	if d, ok := next.delayFor("other"); !ok || d != time.Second {
		t.Errorf("delayFor(other) after applied(other, 1s) = %v, %v; want 1s, true", d, ok)
	}
	if _, ok := next.delayFor("robotsmw"); ok {
		t.Errorf("delayFor(robotsmw) after applied(other): applied, want not")
	}
	if next.agent != "other" || next.allowed(robots, "other", u) {
		t.Errorf("memo after applied(other) is %q's, allowed(other, /page) = true; want other's, false", next.agent)
	}
}
