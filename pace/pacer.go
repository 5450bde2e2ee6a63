package pace

import (
	"context"
	"errors"
	"net/url"
	"time"
)

// ErrUnavailable is wrapped by the cause of a Guard's deferral while its
// Pacer cannot be reached (a Redis that is down, say): the request is
// sent again once the Pacer answers.
var ErrUnavailable = errors.New("pace: pacer unavailable")

// A Pacer is the home of the per-host schedule: where each host's next
// request may start, how many requests are in flight to it, when its last
// response ended, how fast it answers, its pause and its rate cut. A Guard
// keeps nothing of it but a copy: with Guard.Pacer nil it keeps a
// [Local] in its state of each host; one Memory shared by several Guards paces
// them as one; package redisstore keeps it in Redis, so that a fleet of
// crawler processes behaves as one polite crawler, and a pause that one of
// them is asked for (Retry-After, back-off) holds for every one.
//
// A request goes through the schedule in two steps (Reserve): it takes a
// position, at least the host's interval after the one before
// (a rate of starts; see docs/politeness.md), and, once its position has
// come, a lease: one of the host's in-flight places (Ask.InFlight, 1 by
// default, as Nutch, StormCrawler and Heritrix keep one request per host in
// flight), granted only when the previous response ended at least the gap
// before (Crawl-delay, which Yandex counts "after loading one page,
// before starting to load another", or more if the host slows down; see
// Ask.Latency; Yandex:
// https://yandex.com/support/webmaster/controlling-robot/robots-txt.html). When the response has been read to its end, has failed or
// timed out, the Guard gives the lease back (Release) with the response
// time. A lease that is never given back (its member died) runs out.
//
// A Pacer keeps a host's state while the host holds anything — a lease,
// a pause, a cut interval, a position ahead — and for an idle horizon
// after its last response ended, then forgets it (its smoothed response
// time is then unknown again), so the memory it takes is bounded by the
// hosts being crawled: Memory.Idle (1 min by default) in memory,
// redisstore's Fleet.PacerIdle (10 min) in Redis.
//
// Only durations cross the interface: a Pacer measures time on its own
// clock (Redis's TIME, say) and the Guard sleeps the durations it is
// given, so the clocks of the fleet's machines need not agree.
//
// The Guard calls Strike after each 429, 503, 500, 502, 504 or network
// failure, and Recover when a host whose rate was cut has answered well
// long enough to speed up one step. A Pacer must be safe for concurrent
// use by multiple goroutines.
type Pacer interface {
	// Reserve takes, for one request to host, its position in the host's
	// schedule and then its lease. A position comes at least the host's
	// interval (a.Floor, or a cut above it) after the one before, or the
	// host's expected time per request (its smoothed response time plus
	// the gap, over a.InFlight) if that is longer, and never in a pause;
	// burst 1: a host first seen, or idle, gives its position now. A
	// position further away than a.Limit is not taken: Slot.Reserved is
	// false and Slot.Wait says when asking again makes sense. A position
	// that comes later, or any position with a.NoLease, is taken
	// (Reserved, Wait until it): the request asks again then, with
	// a.Positioned. Once the position has come, the lease is granted
	// (Slot.Lease not 0, Wait 0) if fewer than a.InFlight leases are held,
	// the last lease started at least the interval ago and the last
	// response ended at least the gap ago; otherwise Slot.Wait says when
	// to ask again, keeping the position (State.InFlight tells a busy host).
	Reserve(ctx context.Context, host string, a Ask) (Slot, error)

	// Release gives a lease back: the request's response ended (read to
	// its end, failed or timed out) r.Latency after it started. The end
	// starts the gap before the next lease. The smoothed response time
	// grows with slower responses and shrinks with faster ones, except
	// failures (r.Failed), which never shrink it. With r.Unsent the
	// request was not sent: nothing ended.
	Release(ctx context.Context, host string, r Release) (State, error)

	// Strike records a failure seen by one member: the host is paused for
	// s.Pause from now, merged with any pause in force by taking the later
	// end, and its schedule is voided (no position falls before the
	// pause's end). A failure that comes while the host is not paused
	// starts an incident, and cuts the rate once per incident: the
	// interval is multiplied by s.Factor if the last cut is at least one
	// interval old, however many members report the same incident.
	Strike(ctx context.Context, host string, s Strike) (State, error)

	// Recover lowers the host's interval to interval, never below floor
	// nor above its current value: one step of a cut host's recovery. It
	// does nothing while the host is paused or within one interval of its
	// last cut, so a step computed before another member's cut cannot
	// undo it.
	Recover(ctx context.Context, host string, interval, floor time.Duration) (State, error)

	// Watch calls fn whenever a member's Strike changes a host's pause or
	// interval, so that requests already waiting for a slot learn of it at
	// once. A Pacer may also call fn, with a zero State, to have the
	// requests waiting for the host ask it again (package redisstore does
	// when a request that a dead member held is to go first). fn may be
	// called concurrently and must not block. stop ends the calls.
	Watch(fn func(host string, p State)) (stop func())
}

// An Ask is what one request asks of its host's schedule (see
// Pacer.Reserve).
type Ask struct {
	// Floor is the least interval between the starts of two requests: the
	// slowest of the Guard's Rate and the host's Crawl-delays.
	Floor time.Duration
	// Gap is the least time between the end of a response and the start
	// of the next request: the host's Crawl-delay (counted from the end of the response, as Yandex does), 0 if none.
	Gap time.Duration
	// Latency, if not 0, makes the gap at least Latency times the host's
	// smoothed response time, up to MaxLatencyGap: a host that slows down
	// is given more time between requests (see Guard.FixedPace).
	Latency float64
	// Limit is how far ahead a position may be taken.
	Limit time.Duration
	// InFlight is the most leases the host may have at once; below 1
	// means 1.
	InFlight int
	// Lease is how long a lease lasts if it is never given back; 0 means
	// DefaultLease.
	Lease time.Duration
	// Positioned says the request holds its position already.
	Positioned bool
	// NoLease asks for the position only: the lease is asked for when
	// the request is about to be sent (a colly request's OnRequest takes
	// its position, its gate the lease, once no later callback of the
	// user can abort it).
	NoLease bool
	// URL, if set, is the request's URL, for a Pacer that tells a
	// host's requests apart (package redisstore lets a request that a
	// dead member had in flight go first); a Pacer may ignore it, and
	// must not change it. The Guard sets it.
	URL *url.URL
}

// A Release gives a lease back (see Pacer.Release).
type Release struct {
	// Lease is the lease given back.
	Lease uint64
	// Latency is how long the response took, from the start of the
	// request to the end of its body, failure or timeout.
	Latency time.Duration
	// Failed says the request failed (a 429 or 5xx, a network error, a
	// timeout, a body cut short): its latency may raise the smoothed
	// response time, never lower it.
	Failed bool
	// Unsent says the request was not sent after all.
	Unsent bool
	// Floor is the host's floor, for the State returned.
	Floor time.Duration
}

// A Strike is what a failure asks of a host's shared state (see
// Pacer.Strike).
type Strike struct {
	// Pause is how long the host is paused from now: the Retry-After, or
	// the back-off step.
	Pause time.Duration
	// Factor multiplies the interval when the failure starts an incident:
	// 2 after a 429 or 503, 1.25 after a 500, 502, 504 or network error.
	Factor float64
	// Floor is the slowest of the Guard's Rate and the host's
	// Crawl-delays; Ceiling is where cuts stop, unless Floor is slower.
	Floor, Ceiling time.Duration
	// From is the interval a cut starts from when the host has none (it is
	// paced by nothing but back-off).
	From time.Duration
}

// A State is a host's shared state as a Pacer reports it.
type State struct {
	// Interval is the spacing of starts in force: the floor, or a cut
	// above it.
	Interval time.Duration
	// Paused is how much longer the host is paused; 0 if it is not.
	Paused time.Duration
	// Latency is the host's smoothed response time; 0 if not known.
	Latency time.Duration
	// InFlight is how many leases the host has.
	InFlight int
}

// A Slot is the answer of Pacer.Reserve.
type Slot struct {
	// Reserved reports whether the request has its position.
	Reserved bool
	// Lease, if not 0, is the request's lease: it is sent now.
	Lease uint64
	// LeaseTTL is how long Lease lasts unless it is given back (or the
	// Pacer renews it while its holder lives); 0 means DefaultLease. A
	// request that has not been sent within half of it, because its
	// process stalled, asks for its host again (see guardTransport).
	LeaseTTL time.Duration
	// Wait is how long from now until asking again makes sense: until the
	// position, or until the host is likely free.
	Wait time.Duration
	State
}

// Schedule constants (see docs/politeness.md).
const (
	// DefaultLease is how long a lease lasts if its request never gives
	// it back (its member died): longer than any sane request timeout.
	DefaultLease = 2 * time.Minute
	// MaxLatencyGap caps the gap latency-aware pacing adds after each
	// response (Heritrix's maxDelayMs is 30 s); Crawl-delay is not capped
	// by it.
	MaxLatencyGap = 30 * time.Second
	// busyPoll is how long a request waits for a busy host before asking
	// again when the host's response time is not known yet; minBusyWait is
	// the least wait.
	busyPoll    = 250 * time.Millisecond
	minBusyWait = 10 * time.Millisecond
)

// leaseTTL returns how long a lease asked for with d lasts.
func leaseTTL(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return DefaultLease
}

// spacing returns how far apart positions are: the interval, or the
// expected time per request of a host with inFlight places whose
// responses take latency and are followed by gap, if that is longer. So
// requests reach a busy host's gate about when it is free, rather than
// all waiting there.
func spacing(interval, latency, gap time.Duration, inFlight int) time.Duration {
	return max(interval, (latency+gap)/time.Duration(max(inFlight, 1)))
}

// EndGap returns the least time from the end of a response to the start
// of the next request: gap (Crawl-delay), or factor times the smoothed
// response time latency, capped at MaxLatencyGap, if that is longer (see
// Ask.Latency). Every Pacer spaces requests by it.
func EndGap(gap, latency time.Duration, factor float64) time.Duration {
	if factor <= 0 || latency <= 0 {
		return gap
	}
	return max(gap, min(time.Duration(float64(latency)*factor), MaxLatencyGap))
}

// SmoothLatency returns the smoothed response time after a response that
// took sample. A slower response raises it to its own time at once (a
// host that slows down is eased off from its very next request); faster
// ones lower it by a quarter of the difference each, an exponentially
// weighted mean as in TCP's RTT estimate and Scrapy's AutoThrottle, so a
// host recovers over a few responses. A failed response never lowers it
// (AutoThrottle: error responses never shorten the delay).
func SmoothLatency(old, sample time.Duration, failed bool) time.Duration {
	switch {
	case sample <= 0:
		return old
	case sample >= old:
		return sample
	case failed:
		return old
	}
	return old - (old-sample)/4
}
