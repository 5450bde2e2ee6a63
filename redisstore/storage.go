package redisstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrClaimed is returned by Storage.Visited when another member of the
// fleet (or another goroutine) marked the request visited between
// colly's IsVisited and Visited calls: colly then drops the request, and
// only the member that claimed it fetches it.
var ErrClaimed = errors.New("redisstore: request already claimed by another member")

// Cookie cache bounds and Redis settings.
const (
	// maxCookieHosts bounds the hosts whose cookies a Storage keeps in
	// memory; beyond it, arbitrary hosts are dropped (and read from Redis
	// again when next needed).
	maxCookieHosts = 10000
	// cookieTimeout bounds a cookie read or write: cookies are not worth
	// blocking a request for.
	cookieTimeout = time.Second
	// cookieTTL is how long the shared cookie hash lives after its last
	// write.
	cookieTTL = 7 * 24 * time.Hour
)

// crawlKey returns the key of one of colly's crawl-wide structures (the
// visited set of requests sent with Collector.Visit, and the cookies):
// each is one key, under the crawl's hash tag.
func (f *Fleet) crawlKey(name string) string {
	return f.key(tag(f.prefix()), name)
}

// A Storage is colly's storage.Storage kept in the fleet's Redis: the
// visited set is shared by every member, so each URL is fetched once by
// the whole fleet, and cookies are shared per host. Get it from
// Fleet.Storage and pass it to colly.Collector.SetStorage; the zero value
// is not usable.
//
// Visited claims a request atomically: when two members pass colly's
// IsVisited check for the same request at once, only one Visited call
// succeeds and the other returns ErrClaimed. The visited set waits for
// Redis while it cannot be reached (see Fleet.OnDown), so an outage lets
// no URL through unchecked; a claim whose reply was lost as the
// connection broke is recognised as the caller's own when it is tried
// again. Cookies do not wait: while Redis is down a member uses the
// cookies it already holds.
//
// A Storage is safe for concurrent use by multiple goroutines.
type Storage struct {
	f *Fleet

	// mu guards cookies.
	mu sync.Mutex
	// cookies holds each host's cookies as colly serialises them, as
	// read from or written to Redis; "" if the host has none.
	cookies map[string]string
	// noneSince is when a read found that no member has written cookies
	// for any host (the crawl's cookie hash does not exist): for
	// noCookiesFresh after it, a host not read yet has none, without a
	// round trip. Guarded by mu.
	noneSince time.Time
}

// noCookiesFresh is how long a look that found no cookies at all in the
// crawl stands for hosts not read yet.
const noCookiesFresh = time.Second

// Storage returns the fleet's colly storage: the shared visited set and
// cookies. Every call returns the same Storage.
func (f *Fleet) Storage() *Storage {
	f.init()
	return f.storage
}

// Init implements storage.Storage. It does nothing: the Fleet holds the
// Redis connection.
func (s *Storage) Init() error { return nil }

// visitedMember returns the member of the visited set for a request id:
// its 8 bytes, big-endian.
func visitedMember(id uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], id)
	return string(b[:])
}

// crawlKeep is how long the crawl's queue and visited set are kept after
// their last write: a crawl left alone for that long is forgotten.
const crawlKeep = 30 * 24 * time.Hour

// Len returns how many requests the fleet has claimed in its visited set:
// a crawl under the same Prefix that ran before leaves them, and they are
// not fetched again until Clear.
func (s *Storage) Len(ctx context.Context) (int64, error) {
	n, err := s.f.client.HLen(ctx, s.f.crawlKey("visited")).Result()
	if ctx.Err() == nil {
		s.f.seen(err)
	}
	if err != nil {
		return 0, fmt.Errorf("redisstore: counting visited requests: %w", err)
	}
	return n, nil
}

// visitedClaim claims request ARGV[1] in the visited hash KEYS[1] for
// the call ARGV[2] (member and call number): 1 if this call holds the
// claim, now or from an earlier try whose reply was lost, 0 if another
// call does.
var visitedClaim = redis.NewScript(`
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then
	redis.call('PEXPIRE', KEYS[1], ARGV[3])
	return 1
end
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
	return 1
end
return 0
`)

// IsVisited implements storage.Storage: it reports whether any member of
// the fleet marked the request visited. A request this member popped
// from the shared queue was deduplicated as it was queued: it is let
// through without a round trip. Others wait while Redis cannot be
// reached.
func (s *Storage) IsVisited(requestID uint64) (bool, error) {
	if s.f.front.holdsID(requestID) {
		return false, nil
	}
	var visited bool
	err := s.f.waitAs(s.f.front.ctx(), false, func(ctx context.Context) error {
		n, err := s.f.client.HExists(ctx, s.f.crawlKey("visited"), visitedMember(requestID)).Result()
		visited = n
		return err
	})
	return visited, err
}

// Visited implements storage.Storage: it marks the request visited for
// the whole fleet, and returns ErrClaimed if it already was, so that only
// one member fetches it. It waits while Redis cannot be reached. The
// claim names this call, so a try whose reply was lost as Redis went down
// is recognised as this call's own when it is tried again: the URL is
// neither lost nor fetched twice.
func (s *Storage) Visited(requestID uint64) error {
	if s.f.front.holdsID(requestID) {
		return nil // deduplicated when it was queued
	}
	token := s.f.token()
	var claimed int64
	err := s.f.wait(s.f.front.ctx(), func(ctx context.Context) error {
		var err error
		claimed, err = visitedClaim.Run(ctx, s.f.client, []string{s.f.crawlKey("visited")}, visitedMember(requestID), token, crawlKeep.Milliseconds()).Int64()
		return err
	})
	if err != nil {
		return err
	}
	if claimed == 0 {
		return ErrClaimed
	}
	return nil
}

// Cookies implements storage.Storage: it returns the cookies of u's host.
// The first call for a host reads them from Redis; later calls answer
// from memory. It returns "" without waiting if Redis cannot be reached.
func (s *Storage) Cookies(u *url.URL) string {
	s.mu.Lock()
	c, ok := s.cookies[u.Host]
	none := time.Since(s.noneSince) < noCookiesFresh
	s.mu.Unlock()
	if ok || none || s.f.down.Load() {
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), cookieTimeout)
	defer cancel()
	key := s.f.crawlKey("cookies")
	var get *redis.StringCmd
	var exists *redis.IntCmd
	// Each command's own error is read below.
	_, _ = s.f.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		get = p.HGet(ctx, key, u.Host)
		exists = p.Exists(ctx, key)
		return nil
	})
	c, err := get.Result()
	s.f.seen(err)
	switch {
	case errors.Is(err, redis.Nil):
		c = ""
		if exists.Val() == 0 {
			s.mu.Lock()
			s.noneSince = time.Now()
			s.mu.Unlock()
			return "" // not cached: read again once noCookiesFresh passed
		}
	case err != nil:
		return "" // not cached: the next call asks Redis again
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.cookies[u.Host]; ok {
		return prev // set meanwhile by SetCookies
	}
	s.store(u.Host, c)
	return c
}

// SetCookies implements storage.Storage: it keeps the cookies of u's host
// in memory and writes them to Redis for the other members. A failed
// write is dropped: the cookies are then this member's own.
func (s *Storage) SetCookies(u *url.URL, cookies string) {
	s.mu.Lock()
	s.noneSince = time.Time{}
	s.store(u.Host, cookies)
	s.mu.Unlock()
	if s.f.down.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cookieTimeout)
	defer cancel()
	key := s.f.crawlKey("cookies")
	_, err := s.f.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key, u.Host, cookies)
		p.PExpire(ctx, key, cookieTTL)
		return nil
	})
	s.f.seenWrite(err)
}

// store keeps the cookies of host, dropping an arbitrary host when the
// cache is full. s.mu must be held.
func (s *Storage) store(host, cookies string) {
	if s.cookies == nil {
		s.cookies = make(map[string]string)
	}
	if _, ok := s.cookies[host]; !ok && len(s.cookies) >= maxCookieHosts {
		for h := range s.cookies {
			delete(s.cookies, h)
			break
		}
	}
	s.cookies[host] = cookies
}

// forget empties the cookies kept in memory.
func (s *Storage) forget() {
	s.mu.Lock()
	s.cookies = nil
	s.mu.Unlock()
}

// Clear deletes the crawl's shared state from Redis: the frontier (every
// shard's queues, seen ids, leases and counts), the visited set and the
// cookies, so that the next crawl under the same Prefix starts afresh. It
// also empties this Fleet's own copy of the cookies (other members keep
// theirs). robots.txt records and per-host pacing are kept: a pause or a
// rate cut a site asked for holds for the next crawl too, and they expire
// on their own. Clear refuses, with an error that says so, while a member
// is running (Run).
func (f *Fleet) Clear(ctx context.Context) error {
	f.init()
	for i := 0; i < f.shards(); i++ {
		live, err := clearShardScript.Run(ctx, f.client, []string{f.meta(i)}, f.base(i), max(seenBuckets/f.shards(), 1)).Int64()
		if ctx.Err() == nil {
			f.seen(err)
		}
		if err != nil {
			return fmt.Errorf("redisstore: clearing the crawl: %w", err)
		}
		if live > 0 {
			return fmt.Errorf("redisstore: clearing the crawl: %d members are running (Run); clearing now would make them fetch pages again", live)
		}
	}
	err := f.client.Del(ctx, f.crawlKey("visited")).Err()
	if err == nil {
		err = f.client.Del(ctx, f.crawlKey("cookies")).Err()
	}
	if ctx.Err() == nil {
		f.seen(err)
	}
	if err != nil {
		return fmt.Errorf("redisstore: clearing the crawl: %w", err)
	}
	f.storage.forget()
	f.front.mu.Lock()
	f.front.epoch = ""
	f.front.mu.Unlock()
	f.queue.empty()
	f.front.fatal.Store(nil)
	return nil
}
