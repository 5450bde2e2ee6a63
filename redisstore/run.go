package redisstore

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	"github.com/redis/go-redis/v9"
)

// Run's timing.
const (
	// memberTTL is how long a member counts as live (and, while it works,
	// as busy) after its last heartbeat: a member that crashed stops
	// holding up the fleet after it.
	memberTTL = 15 * time.Second
	// The heartbeat's period is a third of memberTTL; beatRetry replaces
	// it after a heartbeat failed.
	beatRetry = time.Second
	// beatTimeout bounds one heartbeat, and leaving the fleet.
	beatTimeout = 2 * time.Second
	// idleMin and idleMax bound the pause between two looks at the
	// shared queue while other members work: idleMin doubling to idleMax.
	idleMin = 200 * time.Millisecond
	idleMax = 2 * time.Second
)

// runKeys returns the keys of runStep and runBeat.
func (f *Fleet) runKeys() []string {
	return []string{f.crawlKey("queue"), f.crawlKey("busy"), f.crawlKey("members"),
		f.crawlKey("holders"), f.crawlKey("visited"), f.crawlKey("since")}
}

// memberTTL returns how long a member counts as live after a heartbeat:
// memberTTL, or the test's.
func (f *Fleet) memberTTL() time.Duration {
	if f.ttl > 0 {
		return f.ttl
	}
	return memberTTL
}

// errRunning is returned by a Run that another Run of the same Fleet
// overlaps.
var errRunning = errors.New("redisstore: Run is already running on this fleet")

// What runStep found.
const (
	stepDrained = 0 // the queue is empty and no member is busy
	stepWork    = 1 // the queue has requests; this member is now busy
	stepIdle    = 2 // the queue is empty but other members are busy
)

// luaRenew, at the start of runStep and runBeat, renews member ARGV[1]
// in the live set KEYS[3] for ARGV[2] ms (ttl) of Redis's clock (now), and
// records in the hash KEYS[6] since when it has been live without a gap:
// a member whose registration had expired (a Redis outage, a pause)
// starts again. Members silent for ten TTLs are forgotten; live counts
// read the set from now on. It leaves the member's live-since in mine.
const luaRenew = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
local old = tonumber(redis.call('ZSCORE', KEYS[3], ARGV[1]) or '0')
if old < now then
	redis.call('HSET', KEYS[6], ARGV[1], now)
end
local mine = tonumber(redis.call('HGET', KEYS[6], ARGV[1]) or tostring(now))
redis.call('ZADD', KEYS[3], now + ttl, ARGV[1])
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now - 10 * ttl)) do
	redis.call('HDEL', KEYS[6], gone)
end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - 10 * ttl)
redis.call('PEXPIRE', KEYS[3], 20 * ttl)
redis.call('PEXPIRE', KEYS[6], 20 * ttl)
local members = redis.call('ZCOUNT', KEYS[3], now, '+inf')
`

// runStep takes stock of the fleet for member ARGV[1], with the members'
// TTL ARGV[2] in ms, everything on Redis's clock. KEYS[1] is the queue,
// KEYS[2] the ZSET of busy members and KEYS[3] the ZSET of live members,
// each scored by its expiry, KEYS[4] the set of members holding requests,
// KEYS[5] the visited hash and KEYS[6] the members' live-since hash;
// ARGV[3] starts the keys of held hashes.
//
// It renews the member (luaRenew), then gives back what dead members held
// (see held.go). A member is dead when its registration expired at least
// a TTL ago while this member was live (so Redis was up and it could have
// renewed it); one no longer registered at all is dead once this member
// has been live for two TTLs. After a Redis outage every registration
// has expired, but nobody has been live since: nothing is taken back
// until the members had the time to renew. Then it drops expired members
// and the member itself from KEYS[2]; if the queue has requests, it marks
// the member busy and returns stepWork, else stepDrained if no member is
// busy and no silent member holds requests that may come back, else
// stepIdle; and the number of live members.
var runStep = redis.NewScript(luaRenew + `
local waiting = false
for _, d in ipairs(redis.call('SMEMBERS', KEYS[4])) do
	if d ~= ARGV[1] then
		local score = redis.call('ZSCORE', KEYS[3], d)
		local dead
		if score then
			score = tonumber(score)
			dead = score + ttl <= now and mine <= score
		else
			dead = mine + 2 * ttl <= now
		end
		if dead then
			local hk = ARGV[3] .. d
			for _, v in ipairs(redis.call('HVALS', hk)) do
				local id = string.sub(v, 1, 8)
				local owner = redis.call('HGET', KEYS[5], id)
				if owner and string.sub(owner, 1, #d + 1) == d .. ':' then
					redis.call('HDEL', KEYS[5], id)
				end
				redis.call('LPUSH', KEYS[1], v)
			end
			redis.call('DEL', hk)
			redis.call('SREM', KEYS[4], d)
		elseif not score or score < now then
			-- Silent, not yet dead: what it holds may come back.
			waiting = true
		end
	end
end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('LLEN', KEYS[1]) > 0 then
	redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])
	redis.call('PEXPIRE', KEYS[2], 2 * ttl)
	return {1, members}
end
if redis.call('ZCARD', KEYS[2]) == 0 and not waiting then
	return {0, members}
end
return {2, members}
`)

// runBeat renews member ARGV[1] (luaRenew) and, if ARGV[3] is "1", keeps
// it in the busy set KEYS[2] for ARGV[2] ms of Redis's clock, and returns
// the number of live members. Its keys are runStep's.
var runBeat = redis.NewScript(luaRenew + `
if ARGV[3] == '1' then
	redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])
	redis.call('PEXPIRE', KEYS[2], 2 * ttl)
end
return members
`)

// Run runs colly's queue q with collector c until the fleet's shared
// queue is drained: until the queue is empty and no live member of the
// fleet is working on a request, which could add more. q must have been
// made with queue.New over f.Queue(), and c should use f.Storage(), so
// that each URL is fetched once by the whole fleet. It returns nil once
// the fleet's work is done.
//
// colly's Queue.Run alone returns as soon as the shared queue looks empty
// to this member, even while other members are still fetching pages
// whose links will fill it again. Run instead runs q whenever the queue
// has requests (marking this member busy in Redis for as long), waits for
// c's pending requests (c.Wait), and otherwise polls the queue, every
// 200 ms to 2 s, until it is drained. Each member calls Run; every member
// should add its seeds to the shared queue before calling it (the
// visited set drops the duplicates), since a member that finds an empty
// queue and an idle fleet returns at once.
//
// While it runs, Run keeps this member in Redis's set of live members,
// with a heartbeat every few seconds; a member that stops beating for 15
// s no longer counts as live or busy. The number of live members sets the
// slow-down under Slow (Fleet.SlowFactor).
//
// If ctx ends, Run stops taking requests from the shared queue (the
// rest stay there for the other members), waits for the requests under
// way, and returns ctx.Err(). While Redis cannot be reached, Run and q
// wait for it (see Fleet.OnDown), whatever ctx says; Close the Fleet to
// give up, and Run returns an error wrapping ErrClosed. Run returns q's
// error if q.Run fails.
//
// Run returns ErrClosed at once if the Fleet is closed.
//
// Run runs once at a time per Fleet (the Fleet is one member): a second
// call while one runs returns an error at once. Do not run q elsewhere
// while Run runs; q can be run again once Run returned.
func (f *Fleet) Run(ctx context.Context, q *queue.Queue, c *colly.Collector) error {
	f.init()
	select {
	case <-f.closed:
		return ErrClosed
	default:
	}
	if !f.queue.running.CompareAndSwap(false, true) {
		return errRunning
	}
	defer f.queue.running.Store(false)
	f.watchEnds(c)
	m := &member{f: f}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		m.heartbeat(stop, f.memberTTL()/3)
	}()
	defer func() {
		close(stop)
		wg.Wait()
		m.leave()
	}()

	idle := idleMin
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		m.setBusy(false)
		state, err := m.step()
		if err != nil {
			return err
		}
		switch state {
		case stepDrained:
			f.log(slog.LevelInfo, "fleet drained")
			return nil
		case stepIdle:
			t := time.NewTimer(idle)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			}
			idle = min(2*idle, idleMax)
			continue
		}
		idle = idleMin
		m.setBusy(true)
		if err := f.runQueue(ctx, q, c); err != nil {
			return err
		}
	}
}

// runQueue runs q until it finds the shared queue empty, waits for c's
// pending requests and stops q, so that it can run again. If ctx ends
// meanwhile, it halts f's Queue, so that q.Run returns once the requests
// under way are done, and returns ctx.Err().
func (f *Fleet) runQueue(ctx context.Context, q *queue.Queue, c *colly.Collector) error {
	done := make(chan struct{})
	watched := make(chan struct{})
	halted := false
	go func() {
		defer close(watched)
		select {
		case <-done:
		case <-ctx.Done():
			f.queue.halts.Add(1)
			halted = true
		}
	}()
	err := q.Run(c)
	close(done)
	<-watched
	if halted {
		f.queue.halts.Add(-1)
	}
	c.Wait()
	q.Stop() // safe now that q.Run returned; lets it run again
	if err != nil {
		return err
	}
	return ctx.Err()
}

// A member is this Fleet's part in one Run.
type member struct {
	f *Fleet

	// mu guards busy, and is held through a heartbeat, so that a
	// heartbeat never marks the member busy again after Run released it.
	mu   sync.Mutex
	busy bool
}

func (m *member) setBusy(busy bool) {
	m.mu.Lock()
	m.busy = busy
	m.mu.Unlock()
}

// step runs runStep, waiting for Redis.
func (m *member) step() (int64, error) {
	f := m.f
	var res []int64
	err := f.wait(func(ctx context.Context) error {
		var err error
		res, err = runStep.Run(ctx, f.client,
			f.runKeys(), f.id, f.memberTTL().Milliseconds(), f.crawlKey("held:")).Int64Slice()
		return err
	})
	if err != nil {
		return 0, err
	}
	f.members.Store(res[1])
	return res[0], nil
}

// heartbeat renews the member in the live set, and in the busy set while
// it is busy, every period until stop is closed. A beat is tried once:
// after a failure, the next one comes after beatRetry if that is sooner.
func (m *member) heartbeat(stop <-chan struct{}, every time.Duration) {
	f := m.f
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		m.mu.Lock()
		busy := "0"
		if m.busy {
			busy = "1"
		}
		ctx, cancel := context.WithTimeout(context.Background(), beatTimeout)
		n, err := runBeat.Run(ctx, f.client, f.runKeys(), f.id, f.memberTTL().Milliseconds(), busy).Int64()
		cancel()
		m.mu.Unlock()
		f.seen(err)
		next := every
		if err == nil {
			f.members.Store(n)
		} else {
			next = min(every, beatRetry)
		}
		t.Reset(next)
	}
}

// leave removes the member from the live and busy sets, trying once: if
// Redis cannot be reached, its entries expire on their own.
func (m *member) leave() {
	f := m.f
	ctx, cancel := context.WithTimeout(context.Background(), beatTimeout)
	defer cancel()
	_, err := f.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRem(ctx, f.crawlKey("busy"), f.id)
		p.ZRem(ctx, f.crawlKey("members"), f.id)
		p.HDel(ctx, f.crawlKey("since"), f.id)
		// Every request this member took has ended (Run waited for c):
		// what is left was refused by colly before any callback.
		p.Del(ctx, f.heldKey(f.id))
		p.SRem(ctx, f.crawlKey("holders"), f.id)
		return nil
	})
	f.seen(err)
}
