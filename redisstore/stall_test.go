package redisstore

import (
	"testing"
	"time"
)

// A response that spanned a stop of the process (the watch's look came
// seconds late, or has not come yet) is given back with the stop taken
// off its time; one that did not is given back as measured.
func TestStallWatchUnstalled(t *testing.T) {
	t0 := time.Now()
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	ms := time.Millisecond
	for _, tc := range []struct {
		name    string
		looks   []time.Duration // looks at the clock, after t0
		latency time.Duration
		end     time.Duration // when the response ended, after t0
		want    time.Duration
	}{
		{"no stall", []time.Duration{0, 100 * ms, 200 * ms, 300 * ms}, 250 * ms, 300 * ms, 250 * ms},
		{"a late look within bounds", []time.Duration{0, 100 * ms, 500 * ms}, 450 * ms, 500 * ms, 450 * ms},
		{"a stop the watch saw", []time.Duration{0, 3100 * ms}, 3050 * ms, 3100 * ms, 50 * ms},
		{"a stop the watch has not seen yet", []time.Duration{0}, 3050 * ms, 3100 * ms, 50 * ms},
		{"a stop before the response", []time.Duration{0, 3100 * ms, 3200 * ms}, 50 * ms, 3250 * ms, 50 * ms},
		{"a response within the stop", []time.Duration{0, 3100 * ms}, 50 * ms, 3100 * ms, 0},
	} {
		var w stallWatch
		for _, d := range tc.looks {
			w.look(at(d))
		}
		if got := w.unstalled(tc.latency, at(tc.end)); got != tc.want {
			t.Errorf("%s: unstalled(%v) = %v, want %v", tc.name, tc.latency, got, tc.want)
		}
	}
}
