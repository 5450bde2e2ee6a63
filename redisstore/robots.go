package redisstore

import (
	"bytes"
	"container/list"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsmw/robotsmw/policy"
)

// How long a robots.txt record stays in Redis. A record is kept at least
// until its Expires time and recordGrace after, so that the next fetch
// still finds the last good copy and the failure count; while the origin is
// unreachable it is kept at least failingGrace after FailingSince, since
// RFC 9309 §2.3.1.4's 30-day rule needs FailingSince and the last good
// copy (docs/robots-semantics.md#unreachable).
const (
	recordGrace  = 7 * 24 * time.Hour
	failingGrace = 31 * 24 * time.Hour
)

// Lease timings: a member that waits for another member's fetch polls the
// record every leasePollMin, doubling to leasePollMax; it waits at most
// Fleet.LeaseWait, or defaultLeaseWait (a fetch's 30 s timeout and some).
const (
	defaultLeaseWait = 45 * time.Second
	leasePollMin     = 50 * time.Millisecond
	leasePollMax     = time.Second
	releaseTimeout   = 5 * time.Second
)

// defaultMaxLocal is the number of records kept in memory when
// Fleet.MaxLocal is zero.
const defaultMaxLocal = 10_000

// Robots returns the fleet's shared robots.txt store, for
// policy.Cache.Store. It is also a [policy.Leaser]: the Caches of the
// fleet's members take turns, so that the fleet fetches an origin's
// robots.txt once per expiry rather than once per member (see Lease).
//
// The store keeps the Fleet.MaxLocal most recently used records in memory,
// parsed, in front of Redis: a look-up of a record that has not expired
// costs no round trip to Redis. A record kept in memory holds its body as
// well as its parsed rules, since a member that finds robots.txt
// unreachable saves the last good copy (RFC 9309 §2.3.1.4). An expired or
// unknown record is read from Redis, on each look-up until a fresh one
// arrives. While Redis cannot be reached, Load returns the record kept in
// memory even if it has expired, so the Cache serves it and tries to
// refresh it; an origin with no record in memory gets an error, which the
// Cache reports as policy.ErrStore (a Guard defers the request).
//
// Each origin's record is one Redis string, Prefix:robots:{origin}, that
// outlives its expiry by 7 days, and while the origin is unreachable
// lasts 31 days from the first failure; its lease is
// Prefix:robots:{origin}:lock.
//
// The store is safe for concurrent use by multiple goroutines.
func (f *Fleet) Robots() policy.Store {
	f.init()
	return f.robots
}

// robotsStore is the policy.Leaser a Fleet's Robots returns: records in
// Redis under f.key("robots", tag(origin)), encoded by encodeRecord,
// behind a local LRU of parsed records, and a lease per origin under
// f.key("robots", tag(origin), "lock").
//
// A robotsStore is safe for concurrent use by multiple goroutines.
type robotsStore struct {
	f         *Fleet
	leaseWait time.Duration // Fleet.LeaseWait or defaultLeaseWait

	// acquire and release are the lease's scripts.
	acquire, release *redis.Script

	// leases numbers this member's leases, for their tokens.
	leases atomic.Uint64

	local localRecords

	// missMu guards missed: when Redis last had no record of an origin
	// this member has none of either. A look-up within missFresh of that
	// answers "not found" without asking again: the Cache then takes the
	// origin's lease, whose script reads the record anyway, so a record
	// another member saved meanwhile is not missed.
	missMu sync.Mutex
	missed map[string]time.Time

	// heldMu guards held: the origins whose lease this member holds, and
	// the record saved meanwhile, which goes to Redis with the lease's
	// release, in one round trip.
	heldMu sync.Mutex
	held   map[string]*heldRobots

	// parseMu guards parsing.
	parseMu sync.Mutex
	// parsing holds the robots.txt bodies being parsed, by origin, so that
	// the goroutines that read one new record from Redis at once parse it
	// once.
	parsing map[string]*parseCall
}

// A heldRobots is a robots.txt lease this member holds, and the write of
// the record saved under it, if any.
type heldRobots struct {
	rec []byte
	ttl time.Duration
}

// A parseCall is one policy.Parse that other goroutines may wait for.
type parseCall struct {
	body   []byte
	done   chan struct{} // closed once robots is set
	robots *policy.Robots
}

// acquireScript reads the record (KEYS[1]) and tries to take the lease
// (KEYS[2]) for ARGV[2] ms with token ARGV[1], at once, so that a member
// that takes the lease has seen any record saved before the last holder let
// it go. It returns {1 if taken else 0, the record or ""}.
const acquireScript = `
local rec = redis.call('GET', KEYS[1])
if not rec then rec = '' end
local got = 0
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then got = 1 end
return {got, rec}
`

// releaseScript deletes the lease (KEYS[1]) only if it still holds our
// token (ARGV[1]): a lease that expired and was taken by another member is
// not ours to end.
const releaseScript = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('DEL', KEYS[1])
end
return 0
`

func newRobotsStore(f *Fleet) *robotsStore {
	s := &robotsStore{
		f:         f,
		leaseWait: f.LeaseWait,
		acquire:   redis.NewScript(acquireScript),
		release:   redis.NewScript(releaseScript),
		parsing:   make(map[string]*parseCall),
	}
	if s.leaseWait <= 0 {
		s.leaseWait = defaultLeaseWait
	}
	s.local.max = f.MaxLocal
	if s.local.max <= 0 {
		s.local.max = defaultMaxLocal
	}
	s.local.byOrigin = make(map[string]*list.Element)
	return s
}

func (s *robotsStore) recordKey(origin string) string { return s.f.politeKey("robots", tag(origin)) }
func (s *robotsStore) lockKey(origin string) string {
	return s.f.politeKey("robots", tag(origin), "lock")
}

// Load implements policy.Store. A record kept in memory that has not
// expired costs no round trip; otherwise the record is read from Redis,
// parsed and kept in memory. A record Redis lacks, or holds damaged, is
// not found, unless one is kept in memory: that one is returned. While
// Redis cannot be reached, the record kept in memory is returned even if it
// has expired; with none, the error is.
func (s *robotsStore) Load(ctx context.Context, origin string) (policy.Record, bool, error) {
	local, haveLocal := s.local.get(origin)
	if haveLocal && s.f.now().Before(local.Expires) {
		return local, true, nil
	}
	if !haveLocal && s.missedLately(origin) {
		return policy.Record{}, false, nil
	}
	b, err := s.f.client.Get(ctx, s.recordKey(origin)).Bytes()
	s.seen(ctx, err)
	switch {
	case errors.Is(err, redis.Nil):
		if !haveLocal {
			s.miss(origin)
		}
	case err != nil:
		if haveLocal {
			return local, true, nil
		}
		return policy.Record{}, false, fmt.Errorf("redisstore: robots.txt of %s: %w", origin, err)
	default:
		if rec, ok := s.decode(origin, b, local, haveLocal); ok {
			return rec, true, nil
		}
		// A damaged record, or one of a later version: not found, so the
		// Cache fetches robots.txt and saves a good one over it.
	}
	if haveLocal {
		// Redis lost the record (restarted, or it outlived its TTL): the
		// copy kept here is still the last word on the origin.
		return local, true, nil
	}
	return policy.Record{}, false, nil
}

// missFresh is how long a look-up that found no record in Redis stands
// for the next ones of the same origin (the first page of a host looks it
// up three times in a row: Peek, Get and the fetch's own).
const missFresh = time.Second

// missedLately reports whether Redis had no record of origin within
// missFresh.
func (s *robotsStore) missedLately(origin string) bool {
	s.missMu.Lock()
	defer s.missMu.Unlock()
	at, ok := s.missed[origin]
	return ok && time.Since(at) < missFresh
}

// miss records that Redis has no record of origin now.
func (s *robotsStore) miss(origin string) {
	s.missMu.Lock()
	defer s.missMu.Unlock()
	if s.missed == nil || len(s.missed) >= 10_000 {
		s.missed = make(map[string]time.Time) // the old ones are stale anyway
	}
	s.missed[origin] = time.Now()
}

// decode returns the record encoded as b, with Robots set, and keeps it in
// memory; ok is false if b is damaged. local (if haveLocal) is the record
// kept in memory. It is returned instead when it was fetched later (a
// Save that did not reach Redis), and its Robots is reused when the body is
// the same.
func (s *robotsStore) decode(origin string, b []byte, local policy.Record, haveLocal bool) (rec policy.Record, ok bool) {
	rec, err := decodeRecord(b)
	if err != nil {
		return policy.Record{}, false
	}
	if haveLocal && local.FetchedAt.After(rec.FetchedAt) {
		return local, true
	}
	if rec.GoodState == policy.StateParsed {
		if haveLocal && local.Robots != nil && local.GoodState == policy.StateParsed && bytes.Equal(local.Body, rec.Body) {
			rec.Robots = local.Robots
		} else {
			rec.Robots = s.parse(origin, rec.Body)
		}
	}
	s.local.put(origin, rec)
	return rec, true
}

// parse returns policy.Parse(body), sharing one parse among the
// goroutines that ask for the same origin and body at once.
func (s *robotsStore) parse(origin string, body []byte) *policy.Robots {
	s.parseMu.Lock()
	if c, ok := s.parsing[origin]; ok && bytes.Equal(c.body, body) {
		s.parseMu.Unlock()
		<-c.done
		return c.robots
	}
	c := &parseCall{body: body, done: make(chan struct{})}
	if _, busy := s.parsing[origin]; !busy {
		s.parsing[origin] = c
	}
	s.parseMu.Unlock()

	c.robots = policy.Parse(body)
	close(c.done)

	s.parseMu.Lock()
	if s.parsing[origin] == c {
		delete(s.parsing, origin)
	}
	s.parseMu.Unlock()
	return c.robots
}

// Save implements policy.Store. It keeps r in memory, parsing Body if
// Robots is nil, and writes it to Redis in one round trip, with a TTL that
// keeps it recordGrace past Expires, and while the origin is unreachable
// failingGrace past FailingSince (RFC 9309 §2.3.1.4). When the write
// fails the record stays in memory, so this member does not fetch
// robots.txt again before it expires.
//
// r.Body must hold the last good copy's body when r.GoodState is
// policy.StateParsed: Robots is not written to Redis.
func (s *robotsStore) Save(ctx context.Context, origin string, r policy.Record) error {
	if r.GoodState == policy.StateParsed && r.Robots == nil {
		r.Robots = s.parse(origin, r.Body)
	}
	s.local.put(origin, r)
	b, err := encodeRecord(r)
	if err != nil {
		return fmt.Errorf("redisstore: robots.txt of %s: %w", origin, err)
	}
	s.heldMu.Lock()
	if h := s.held[origin]; h != nil {
		// Written with the lease's release, which the Cache calls next.
		h.rec, h.ttl = b, recordTTL(r, s.f.now())
		s.heldMu.Unlock()
		return nil
	}
	s.heldMu.Unlock()
	err = s.f.client.Set(ctx, s.recordKey(origin), b, recordTTL(r, s.f.now())).Err()
	s.seenWrite(ctx, err)
	if err != nil {
		return fmt.Errorf("redisstore: saving robots.txt of %s: %w", origin, err)
	}
	return nil
}

// recordTTL returns how long Redis keeps r, saved at now.
func recordTTL(r policy.Record, now time.Time) time.Duration {
	ttl := max(r.Expires.Sub(now), 0) + recordGrace
	if r.State == policy.StateUnreachable && !r.FailingSince.IsZero() {
		// RFC 9309 §2.3.1.4: the 30 days run from the first failure.
		ttl = max(ttl, r.FailingSince.Add(failingGrace).Sub(now))
	}
	return max(ttl, time.Millisecond)
}

// Lease implements policy.Leaser: it takes the origin's lease, one member
// of the fleet at a time, or waits for the holder's record.
//
// When the lease is free Lease takes it for Fleet.LeaseWait and returns
// release, which lets it go (only if it is still ours). Otherwise it polls
// the record, every 50 ms doubling to 1 s: as soon as a record that has
// not expired appears, Lease returns it with fresh set (and keeps it in
// memory); when the lease is let go or expires without one (its holder
// failed or died), Lease takes it. After Fleet.LeaseWait it gives up with
// an error, and the Cache fetches robots.txt itself. When Redis cannot be
// reached, Lease returns the error at once.
func (s *robotsStore) Lease(ctx context.Context, origin string) (rec policy.Record, fresh bool, release func(), err error) {
	token := s.f.id + ":" + strconv.FormatUint(s.leases.Add(1), 10)
	keys := []string{s.recordKey(origin), s.lockKey(origin)}
	ms := max(s.leaseWait.Milliseconds(), 1)
	giveUp := time.NewTimer(s.leaseWait)
	defer giveUp.Stop()
	for d := leasePollMin; ; d = min(2*d, leasePollMax) {
		got, b, err := s.tryAcquire(ctx, keys, token, ms)
		if err != nil {
			return policy.Record{}, false, nil, fmt.Errorf("redisstore: robots.txt lease of %s: %w", origin, err)
		}
		if len(b) > 0 {
			local, haveLocal := s.local.get(origin)
			if rec, ok := s.decode(origin, b, local, haveLocal); ok && s.f.now().Before(rec.Expires) {
				if got {
					// Saved before its holder let the lease go: use it,
					// and let the lease go too.
					s.releaser(keys[1], token)()
				}
				return rec, true, nil, nil
			}
		}
		if got {
			s.heldMu.Lock()
			if s.held == nil {
				s.held = make(map[string]*heldRobots)
			}
			h := &heldRobots{}
			s.held[origin] = h
			s.heldMu.Unlock()
			var once sync.Once
			return policy.Record{}, false, func() {
				once.Do(func() { s.releaseHeld(origin, h, keys, token) })
			}, nil
		}
		poll := time.NewTimer(d)
		select {
		case <-poll.C:
		case <-giveUp.C:
			poll.Stop()
			return policy.Record{}, false, nil, fmt.Errorf("redisstore: robots.txt of %s: waited %v for another member's fetch", origin, s.leaseWait)
		case <-ctx.Done():
			poll.Stop()
			return policy.Record{}, false, nil, fmt.Errorf("redisstore: robots.txt lease of %s: %w", origin, ctx.Err())
		}
	}
}

// seen reports the outcome of a Redis call to the Fleet (Redis up or
// down), except a call cut short by its own ctx, which says nothing about
// Redis.
func (s *robotsStore) seen(ctx context.Context, err error) {
	if err != nil && ctx.Err() != nil {
		return
	}
	s.f.seen(err)
}

// seenWrite is seen for a call that writes.
func (s *robotsStore) seenWrite(ctx context.Context, err error) {
	if err != nil && ctx.Err() != nil {
		return
	}
	s.f.seenWrite(err)
}

// tryAcquire runs acquireScript: it reports whether the lease was taken,
// and returns the record's encoding (empty when there is none).
func (s *robotsStore) tryAcquire(ctx context.Context, keys []string, token string, ms int64) (got bool, rec []byte, err error) {
	v, err := s.acquire.Run(ctx, s.f.client, keys, token, ms).Slice()
	s.seenWrite(ctx, err)
	if err != nil {
		return false, nil, err
	}
	if len(v) != 2 {
		return false, nil, fmt.Errorf("lease script returned %d values, want 2", len(v))
	}
	n, ok1 := v[0].(int64)
	str, ok2 := v[1].(string)
	if !ok1 || !ok2 {
		return false, nil, fmt.Errorf("lease script returned %T, %T; want int64, string", v[0], v[1])
	}
	return n == 1, []byte(str), nil
}

// releaser returns the func that lets the lease (held with token under
// lock) go. It runs once, on a context of its own: the Cache calls it after
// its fetch, with no context. If it fails, the lease expires on its own.
// releaseHeld lets the lease h of origin go (keys: the record's and the
// lease's, token: the lease's) and writes the record saved under it, if
// any, in one round trip.
func (s *robotsStore) releaseHeld(origin string, h *heldRobots, keys []string, token string) {
	s.heldMu.Lock()
	if s.held[origin] == h {
		delete(s.held, origin)
	}
	rec, ttl := h.rec, h.ttl
	s.heldMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if rec == nil {
		err := s.release.Run(ctx, s.f.client, keys[1:], token).Err()
		s.seen(ctx, err)
		return
	}
	var set *redis.StatusCmd
	_, err := s.f.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		set = p.Set(ctx, keys[0], rec, ttl)
		s.release.Eval(ctx, p, keys[1:], token)
		return nil
	})
	if set != nil {
		s.seenWrite(ctx, set.Err())
	} else {
		s.seen(ctx, err)
	}
}

func (s *robotsStore) releaser(lock, token string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
			defer cancel()
			err := s.release.Run(ctx, s.f.client, []string{lock}, token).Err()
			s.seen(ctx, err)
		})
	}
}

// localRecords is the in-memory LRU of records in front of Redis: at
// most max of them, the least recently used forgotten first. A record
// kept here has its Robots set when its GoodState is policy.StateParsed.
type localRecords struct {
	max int

	// mu guards order and byOrigin.
	mu       sync.Mutex
	order    list.List // of *localRecord, most recently used first
	byOrigin map[string]*list.Element
}

type localRecord struct {
	origin string
	rec    policy.Record
}

func (l *localRecords) get(origin string) (policy.Record, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.byOrigin[origin]
	if !ok {
		return policy.Record{}, false
	}
	l.order.MoveToFront(e)
	return e.Value.(*localRecord).rec, true
}

func (l *localRecords) put(origin string, r policy.Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.byOrigin[origin]; ok {
		e.Value.(*localRecord).rec = r
		l.order.MoveToFront(e)
		return
	}
	l.byOrigin[origin] = l.order.PushFront(&localRecord{origin: origin, rec: r})
	for l.order.Len() > l.max {
		e := l.order.Back()
		l.order.Remove(e)
		delete(l.byOrigin, e.Value.(*localRecord).origin)
	}
}

// len returns the number of records kept.
func (l *localRecords) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.order.Len()
}
