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
