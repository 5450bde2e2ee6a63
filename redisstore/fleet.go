package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"
	whatwg "github.com/nlnwa/whatwg-url/url"
	"github.com/redis/go-redis/v9"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// DefaultPrefix starts every key a Fleet writes when Fleet.Prefix is empty.
const DefaultPrefix = "robotsmw"

// A Mode says what a Fleet's members do while Redis cannot be reached.
type Mode uint8

const (
	// Pause stops the fleet's requests until Redis is back: each request
	// is deferred (a *robotsmw.DeferredError wrapping
	// pace.ErrUnavailable and Redis's error) and sent again
	// later. The default: politeness never depends on a guess.
	Pause Mode = iota
	// Slow lets each member go on alone with the requests it holds,
	// pacing each host at its interval multiplied by the number of members
	// (Fleet.SlowFactor), so the fleet as a whole stays near the shared
	// rate without Redis. The shared queue and visited set still wait for
	// Redis, so a crawl fed by them mostly pauses either way; Slow is for
	// members given their URLs some other way. Each member keeps its own
	// in-flight cap meanwhile: a host may have one request in flight per
	// member.
	Slow
)

// A Fleet is the state that the crawler processes of a fleet share in one
// Redis: robots.txt records (Robots), per-host pacing and pauses (Pacer),
// colly's visited set and cookies (Storage) and its request queue
// (Queue). Each process makes its own Fleet over the same Redis and
// Prefix; see the package documentation for how to wire it to a Guard and
// a collector.
//
// Every key it writes starts with Prefix (robots.txt records and pacing
// with Politeness) and has a TTL: a host's pacing state lives PacerIdle
// (10 minutes) past its schedule, pause, leases and last response (a day
// past its last write while its rate is cut), a robots.txt record a week past its expiry
// (31 days while its origin fails), the frontier and the visited set 30
// days past their last write (Clear removes them at once). Keys of one
// host or origin share a hash tag, and so do the keys of one frontier
// shard, so each script touches one Redis Cluster slot.
//
// Set the fields before the first use; a Fleet is safe for concurrent use
// by multiple goroutines after that. Close ends its background work.
type Fleet struct {
	// Prefix starts every key: it names the crawl. Crawls with different
	// prefixes share nothing, unless they name the same Politeness. If
	// empty, DefaultPrefix.
	Prefix string

	// WhenDown says what happens while Redis cannot be reached: Pause (the
	// zero value) or Slow. The visited set and the queue wait for Redis in
	// either mode, so no URL is lost.
	WhenDown Mode

	// SlowFactor multiplies each host's interval under Slow. If zero, the
	// number of members that Run saw when Redis was last reached, or 4 when
	// none was seen.
	SlowFactor int

	// OnDown, if set, is called when Redis stops answering, or is full
	// (it refuses writes with OOM: maxmemory under the noeviction
	// policy; the error then wraps ErrFull), with the error, and with nil once it answers (takes writes)
	// again. A full Redis is an outage like any other: the fleet pauses
	// (WhenDown) and resumes once writes succeed, losing nothing. It
	// must not block, nor call Close, which waits for the member's
	// background sends (OnDown is called from them): none of them runs
	// after Close returns.
	OnDown func(err error)

	// Logger, if set, is told when Redis stops answering ("redis
	// unreachable", Warn: member, mode, error) and answers again ("redis
	// reachable", Info: member), when it is full ("redis full", Warn:
	// member, mode, error and what to do) and takes writes again ("redis
	// takes writes again", Info: member), and when Run finds the fleet
	// drained ("fleet drained", Info: member). Give the Guard the same
	// Logger for its own events. If nil, nothing is logged.
	Logger *slog.Logger

	// MaxLocal is the number of robots.txt records kept in memory in front
	// of Redis. If zero, 10,000.
	MaxLocal int

	// LeaseWait bounds how long a member waits for another member's
	// robots.txt fetch before it fetches itself. If zero, 45 s (a fetch's
	// 30 s timeout and some).
	LeaseWait time.Duration

	// MaxQueue is the most distinct requests the shared queue holds
	// (duplicates are dropped, not counted); AddRequest returns
	// colly.ErrQueueFull beyond it. Each shard holds its share. If zero,
	// 10,000,000.
	MaxQueue int

	// Politeness names the namespace of the robots.txt records and of
	// each host's pacing: crawls of one agent with different Prefixes (two
	// frontiers) and the same Politeness pace each host once, together.
	// If empty, Prefix.
	Politeness string

	// PacerIdle is how long a host's pacing state is kept in Redis once it
	// holds nothing: its schedule and pause are past and no lease is held
	// (a lease given back holds nothing; one never given back holds until
	// it runs out). Each write of the state sets its TTL to outlive what
	// it holds and its last response's end by PacerIdle; once it expires,
	// the host's smoothed response time is unknown again, as for a host
	// first seen. A host whose rate is cut is kept a day past its last
	// write, or PacerIdle if longer. If zero, 10 minutes. It is the same
	// horizon as pace.Memory.Idle, on Redis's clock; give every
	// member the same value.
	PacerIdle time.Duration

	// Shards is the number of parts the frontier is split into, each in
	// one Redis Cluster slot (a host's requests stay in one part). If
	// zero, 1 over a single Redis and 16 over a *redis.ClusterClient.
	// Every member of a crawl must use the same value.
	Shards int

	// Now returns the current time, for robots.txt expiry. If nil,
	// time.Now. Pacing never reads it: it runs on Redis's clock.
	Now func() time.Time

	client redis.UniversalClient
	id     string // this member's name in the fleet
	calls  atomic.Uint64

	initOnce sync.Once
	closed   chan struct{}
	closeMu  sync.Mutex // guards closing of closed

	// down is set while Redis is known to be unreachable, or full; full
	// is set while it is full (it refuses writes: maxmemory with
	// noeviction), and only a write that succeeds clears it.
	down    atomic.Bool
	full    atomic.Bool
	members atomic.Int64 // members Run saw last; 0 if none

	urls whatwg.Parser // colly's URL parser, for request ids
	ttl  time.Duration // a test's memberTTL; 0 means memberTTL

	// endsMu guards ends: the collectors whose request ends release what
	// this member holds.
	endsMu sync.Mutex
	ends   map[*colly.Collector]bool

	robots  *robotsStore
	pacer   *pacer
	member  *memberPacer // the Pacer Attach gives the Guard
	stalls  stallWatch   // while Run runs
	storage *Storage
	queue   *Queue

	front frontier // this member's side of the frontier
	guard atomic.Pointer[robotsmw.Guard]
}

// New returns a Fleet over client: any go-redis UniversalClient (a
// *redis.Client, a *redis.ClusterClient, a failover or ring client).
func New(client redis.UniversalClient) *Fleet {
	return &Fleet{client: client}
}

func (f *Fleet) init() {
	f.initOnce.Do(func() {
		f.closed = make(chan struct{})
		var b [8]byte
		_, _ = rand.Read(b[:])
		f.id = hex.EncodeToString(b[:])
		f.urls = whatwg.NewParser(whatwg.WithPercentEncodeSinglePercentSign())
		f.robots = newRobotsStore(f)
		f.pacer = newPacer(f)
		f.member = newMemberPacer(f.pacer)
		f.storage = &Storage{f: f}
		f.queue = &Queue{f: f}
		f.front.init(f)
	})
}

// ID returns this member's name in the fleet: random, one per Fleet.
func (f *Fleet) ID() string {
	f.init()
	return f.id
}

// Close ends the Fleet's background work (the pause watcher) and makes
// calls that wait for Redis give up with ErrClosed. It does not close the
// Redis client.
func (f *Fleet) Close() error {
	f.init()
	f.closeMu.Lock()
	defer f.closeMu.Unlock()
	select {
	case <-f.closed:
	default:
		close(f.closed)
	}
	f.member.close()
	f.pacer.close()
	return nil
}

// token returns a name for one call of this member that is tried until
// Redis answers: the member's name and the call's number.
func (f *Fleet) token() string {
	return f.id + ":" + strconv.FormatUint(f.calls.Add(1), 36)
}

// ErrClosed is returned by calls that waited for Redis when the Fleet was
// closed.
var ErrClosed = errors.New("redisstore: fleet closed")

// key returns the key named by parts, under the prefix.
func (f *Fleet) key(parts ...string) string {
	return f.prefix() + ":" + strings.Join(parts, ":")
}

// prefix returns the crawl's prefix.
func (f *Fleet) prefix() string {
	if f.Prefix == "" {
		return DefaultPrefix
	}
	return f.Prefix
}

// politeKey returns the key named by parts in the politeness namespace
// (robots.txt records and pacing).
func (f *Fleet) politeKey(parts ...string) string {
	p := f.Politeness
	if p == "" {
		p = f.prefix()
	}
	return p + ":" + strings.Join(parts, ":")
}

// tag returns s as a Redis Cluster hash tag: the keys of one host or
// origin land in one slot.
func tag(s string) string { return "{" + s + "}" }

func (f *Fleet) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// ErrNotRedis is wrapped by the error of a call whose reply was not
// Redis's protocol: the address is some other server. It is not an
// outage, so nothing waits for it.
var ErrNotRedis = errors.New("redisstore: the server does not speak the Redis protocol")

// isProtocol reports whether err is go-redis failing to read a reply: the
// server is not Redis (or not a version that speaks RESP).
func isProtocol(err error) bool {
	if err == nil {
		return false
	}
	var re redis.Error
	if errors.As(err, &re) {
		return false
	}
	m := err.Error()
	for _, p := range []string{"redis: can't parse", "redis: invalid reply", "redis: invalid line", "redis: got ", "redis: the length of the array"} {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}

// isDown reports whether err means that Redis could not be reached or
// cannot serve now (it is full, among others), rather than that it
// answered.
func isDown(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) || isProtocol(err) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false // the caller gave up, Redis did not
	}
	var re redis.Error
	if errors.As(err, &re) {
		for _, p := range []string{"LOADING", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "READONLY", "BUSY", "OOM"} {
			if strings.HasPrefix(re.Error(), p) {
				return true
			}
		}
		return false
	}
	return true
}

// isFull reports whether err is Redis refusing a write because it used
// up its maxmemory (under the noeviction policy).
func isFull(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && strings.HasPrefix(re.Error(), "OOM")
}

// ErrFull is wrapped, with Redis's own error, by the error OnDown is
// given when Redis is full: it refuses writes (OOM) because it reached
// its maxmemory under the noeviction policy. The fleet pauses as for an
// outage, and resumes once writes succeed.
var ErrFull = errors.New("redisstore: Redis is full (maxmemory)")

// fullHint tells the operator of a full Redis what to do.
const fullHint = "Redis refuses writes: it reached maxmemory under the noeviction policy; the fleet pauses, losing nothing, and resumes once writes succeed: raise maxmemory (CONFIG SET maxmemory), free memory, or give the crawl a Redis of its own"

// seen records the outcome of a Redis call that reads: it tells OnDown
// when Redis stops or starts answering. A read that succeeds while Redis
// is full says nothing of writes: the fleet stays paused.
func (f *Fleet) seen(err error) { f.seenCall(err, false) }

// seenWrite is seen for a call that a full Redis refuses: one whose first
// write adds data (Redis refuses a script on a full server only at its
// first write, and only if that write adds data: a script that starts by
// deleting runs to its end). One that succeeds ends the pause for a full
// Redis.
func (f *Fleet) seenWrite(err error) { f.seenCall(err, true) }

func (f *Fleet) seenCall(err error, write bool) {
	switch {
	case isFull(err):
		if !f.full.Swap(true) {
			f.down.Store(true)
			f.log(slog.LevelWarn, "redis full", slog.String("mode", f.WhenDown.String()), slog.String("error", err.Error()), slog.String("do", fullHint))
			if f.OnDown != nil {
				f.OnDown(fmt.Errorf("%w: %w", ErrFull, err))
			}
		}
	case isDown(err):
		if !f.down.Swap(true) {
			f.log(slog.LevelWarn, "redis unreachable", slog.String("mode", f.WhenDown.String()), slog.String("error", err.Error()))
			if f.OnDown != nil {
				f.OnDown(err)
			}
		}
	case f.full.Load():
		if write && err == nil && f.full.Swap(false) {
			f.down.Store(false)
			f.log(slog.LevelInfo, "redis takes writes again")
			if f.OnDown != nil {
				f.OnDown(nil)
			}
		}
	case f.down.Load():
		if f.down.Swap(false) {
			f.log(slog.LevelInfo, "redis reachable")
			if f.OnDown != nil {
				f.OnDown(nil)
			}
		}
	}
}

// log logs msg at level with attrs and the member's ID, if Logger is set
// and enabled at level.
func (f *Fleet) log(level slog.Level, msg string, attrs ...slog.Attr) {
	if l := f.Logger; l != nil && l.Enabled(context.Background(), level) {
		l.LogAttrs(context.Background(), level, msg, append([]slog.Attr{slog.String("member", f.id)}, attrs...)...)
	}
}

// String returns "pause" or "slow".
func (m Mode) String() string {
	if m == Slow {
		return "slow"
	}
	return "pause"
}

// Outage retries: the visited set and the queue wait for Redis rather
// than lose a URL.
const (
	retryMin = 100 * time.Millisecond
	retryMax = 5 * time.Second
)

// tryAs runs fn once, and returns its error, wrapping ErrNotRedis if the
// reply was not Redis's protocol; write says that a full Redis refuses fn
// (see seenWrite).
func (f *Fleet) tryAs(ctx context.Context, write bool, fn func(ctx context.Context) error) error {
	f.init()
	err := fn(ctx)
	f.seenCall(err, write)
	if isProtocol(err) {
		return fmt.Errorf("%w: %w", ErrNotRedis, err)
	}
	return err
}

// wait runs fn until Redis answers it, sleeping between tries (retryMin
// doubling to retryMax), and returns its error once Redis answered. It
// gives up with ErrClosed if the Fleet is closed meanwhile, and with
// ctx's error when ctx ends. A reply that is not Redis's protocol ends
// it at once with an error wrapping ErrNotRedis.
func (f *Fleet) wait(ctx context.Context, fn func(ctx context.Context) error) error {
	return f.waitAs(ctx, false, fn)
}

// waitAs is wait; write says that a full Redis refuses fn (see
// seenWrite).
func (f *Fleet) waitAs(ctx context.Context, write bool, fn func(ctx context.Context) error) error {
	f.init()
	d := retryMin
	for {
		err := fn(ctx)
		f.seenCall(err, write)
		if isProtocol(err) {
			return fmt.Errorf("%w: %w", ErrNotRedis, err)
		}
		if !isDown(err) {
			return err
		}
		if ctx.Err() != nil {
			return errors.Join(context.Cause(ctx), err)
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return errors.Join(context.Cause(ctx), err)
		case <-f.closed:
			t.Stop()
			return errors.Join(ErrClosed, err)
		}
		d = min(2*d, retryMax)
	}
}
