package robotsmw

import (
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"
)

// nWaitBounds is the number of WaitStats' buckets.
const nWaitBounds = 12

// waitBounds returns the upper bounds of WaitStats' buckets: from a
// millisecond to defaultMaxWait and beyond.
func waitBounds() [nWaitBounds]time.Duration {
	return [nWaitBounds]time.Duration{
		time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond,
		250 * time.Millisecond, 500 * time.Millisecond, time.Second,
		2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
		20 * time.Second, 30 * time.Second, time.Minute,
	}
}

// WaitStats is a histogram of how long requests waited inside colly's
// callbacks before they were sent, on the Guard's clock: in the Guard's
// OnRequest (robots.txt, pause, the request's position) and at the host's
// gate in OnRequestHeaders (its lease, Crawl-delay, the gap after the last
// response; a synchronous collector's request takes its position there). The time a request spends between the two in colly's own
// queue for a LimitRule slot is colly's, not the Guard's, and is not
// counted. Each attempt that is sent counts once; one that is deferred
// instead counts in Deferred, and its later attempt counts its own wait.
// The time a deferred request spends in the Guard's queue holds no thread
// and is not a wait here.
type WaitStats struct {
	// Count is the number of waits, Sum their total.
	Count int64
	Sum   time.Duration
	// Buckets counts the waits up to each bound, cumulatively (as
	// Prometheus histograms do), bounds from 1 ms to 1 min; longer waits
	// are in Count only.
	Buckets []WaitBucket
}

// A WaitBucket counts the waits up to UpTo.
type WaitBucket struct {
	UpTo  time.Duration
	Count int64
}

// waitHistogram records waits: one atomic add per bucket, count and sum,
// no lock.
type waitHistogram struct {
	count, sum atomic.Int64
	buckets    [nWaitBounds]atomic.Int64 // per bucket, not cumulative
}

// observe records a wait of d.
func (w *waitHistogram) observe(d time.Duration) {
	w.count.Add(1)
	if d <= 0 {
		w.buckets[0].Add(1) // most requests: no wait, one add fewer
		return
	}
	w.sum.Add(int64(d))
	for i, b := range waitBounds() {
		if d <= b {
			w.buckets[i].Add(1)
			return
		}
	}
}

// snapshot returns the histogram's counts, cumulative.
func (w *waitHistogram) snapshot() WaitStats {
	s := WaitStats{Count: w.count.Load(), Sum: time.Duration(w.sum.Load()), Buckets: make([]WaitBucket, nWaitBounds)}
	var n int64
	for i, b := range waitBounds() {
		n += w.buckets[i].Load()
		s.Buckets[i] = WaitBucket{UpTo: b, Count: n}
	}
	return s
}

// inFlight returns the number of colly requests sent whose response
// headers or error have not arrived: those in the transport under the
// Guard's transport (see guardTransport.send).
func (g *Guard) inFlight() int {
	return int(g.flying.Load())
}

// GuardOf returns the Guard attached to c, or to the collector c was
// cloned from, so that the Stats of a collector made with the one-liner
// are at hand:
//
//	c := colly.NewCollector(robotsmw.Attach())
//	...
//	fmt.Println(robotsmw.GuardOf(c).Stats())
//
// It finds the Guard through the transport Attach put under c's HTTP
// client, and returns nil if there is none: no Guard was attached, or a
// later WithTransport, SetProxyFunc or SetClient replaced it. A Guard's
// fields must not be changed after its first request; set them on a Guard
// of your own (&Guard{...}.Attach) instead.
func GuardOf(c *colly.Collector) *Guard {
	if c == nil {
		return nil
	}
	if t := guarded(c); t != nil {
		return t.g
	}
	return nil
}
