package redisstore

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/gocolly/colly/v2"
	"github.com/redis/go-redis/v9"
)

// defaultMaxQueue is the capacity of the shared queue when
// Fleet.MaxQueue is zero.
const defaultMaxQueue = 10_000_000

// queueAdd pushes ARGV[1] onto the list KEYS[1] unless it already holds
// ARGV[2] entries, and keeps the list ARGV[3] ms: 1 if pushed, 0 if full.
var queueAdd = redis.NewScript(`
if redis.call('LLEN', KEYS[1]) >= tonumber(ARGV[2]) then
	return 0
end
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

// queuePop pops the oldest request of the list KEYS[1] that is not in
// the visited hash KEYS[4] for the call ARGV[2] of member ARGV[1], keeps
// it in the member's held hash KEYS[3] (and the member in the holders set
// KEYS[5]) for ARGV[3] ms, and in the hash KEYS[2] under the member,
// after the call's token and a newline, until the member's next pop: a
// call tried again because its reply was lost gets the same request, not
// the next one. Requests already visited are dropped, at most 100 a call;
// "" means ask again.
var queuePop = redis.NewScript(`
local token = ARGV[2] .. '\n'
local last = redis.call('HGET', KEYS[2], ARGV[1])
if last and string.sub(last, 1, #token) == token then
	return string.sub(last, #token + 1)
end
for i = 1, 100 do
	local v = redis.call('RPOP', KEYS[1])
	if not v then
		redis.call('HDEL', KEYS[2], ARGV[1])
		return false
	end
	local id = string.sub(v, 1, 8)
	if redis.call('HEXISTS', KEYS[4], id) == 0 then
		redis.call('HSET', KEYS[3], id, v)
		redis.call('PEXPIRE', KEYS[3], ARGV[3])
		redis.call('SADD', KEYS[5], ARGV[1])
		redis.call('PEXPIRE', KEYS[5], ARGV[3])
		redis.call('HSET', KEYS[2], ARGV[1], token .. v)
		redis.call('PEXPIRE', KEYS[2], 86400000)
		return v
	end
end
return ''
`)

// A Queue is colly's queue.Storage kept in the fleet's Redis: one list
// that every member pushes requests onto and pops them from, first in,
// first out. Get it from Fleet.Queue, pass it to queue.New, and run the
// queue with Fleet.Run, which tells when the whole fleet's work is done;
// the zero value is not usable.
//
// Every call waits while Redis cannot be reached (see Fleet.OnDown), so a
// request is never dropped and colly's queue loop pauses rather than
// ends; a call gives up with ErrClosed when the Fleet is closed. A pop
// whose reply was lost as the connection broke gets the same request when
// it is tried again; a push whose reply was lost may push the request
// twice (the visited set drops the second).
//
// A request popped is held under this member's name until it ends (see
// held.go), so that the fleet gets it back if the member dies; pop only
// through Fleet.Run, which registers the member: one that is not
// registered counts as dead. Requests already visited are dropped as they
// are popped.
//
// A Queue is safe for concurrent use by multiple goroutines.
type Queue struct {
	f *Fleet

	// halts counts the Runs whose ctx ended while their colly queue
	// runs. While it is above zero, QueueSize reports an empty queue and
	// GetRequest no request, so that colly's queue loop ends once the
	// requests under way are done. (colly's Queue.Stop cannot be called
	// while Queue.Run runs: its loop reads the flag without a lock.)
	halts atomic.Int32
	// running is set while Fleet.Run runs.
	running atomic.Bool
}

// Queue returns the fleet's shared colly queue storage. Every call
// returns the same Queue.
func (f *Fleet) Queue() *Queue {
	f.init()
	return f.queue
}

// Init implements queue.Storage. It does nothing: the Fleet holds the
// Redis connection.
func (q *Queue) Init() error { return nil }

// AddRequest implements queue.Storage: it appends a serialised request
// to the shared queue, or returns colly.ErrQueueFull if the queue holds
// Fleet.MaxQueue requests.
func (q *Queue) AddRequest(r []byte) error {
	limit := q.f.MaxQueue
	if limit <= 0 {
		limit = defaultMaxQueue
	}
	var pushed int64
	err := q.f.wait(func(ctx context.Context) error {
		var err error
		pushed, err = queueAdd.Run(ctx, q.f.client, []string{q.f.crawlKey("queue")}, q.f.item(r), limit, crawlKeep.Milliseconds()).Int64()
		return err
	})
	if err != nil {
		return err
	}
	if pushed == 0 {
		return colly.ErrQueueFull
	}
	return nil
}

// GetRequest implements queue.Storage: it removes the oldest request
// from the shared queue and returns it, or returns nil and no error if
// the queue is empty (or a Run of this Fleet is stopping).
func (q *Queue) GetRequest() ([]byte, error) {
	if q.halts.Load() > 0 {
		return nil, nil
	}
	keys := []string{q.f.crawlKey("queue"), q.f.crawlKey("popped"), q.f.heldKey(q.f.id),
		q.f.crawlKey("visited"), q.f.crawlKey("holders")}
	for {
		token := q.f.token()
		var v string
		err := q.f.wait(func(ctx context.Context) error {
			var err error
			v, err = queuePop.Run(ctx, q.f.client, keys, q.f.id, token, crawlKeep.Milliseconds()).Text()
			if errors.Is(err, redis.Nil) {
				v, err = "", redis.Nil
			}
			return err
		})
		switch {
		case errors.Is(err, redis.Nil):
			return nil, nil // empty
		case err != nil:
			return nil, err
		case len(v) < 8:
			continue // visited requests dropped; ask again
		}
		return marked([]byte(v[8:]), v[:8]), nil
	}
}

// QueueSize implements queue.Storage: it returns the number of requests
// in the shared queue, or 0 while a Run of this Fleet is stopping.
func (q *Queue) QueueSize() (int, error) {
	if q.halts.Load() > 0 {
		return 0, nil
	}
	var n int64
	err := q.f.wait(func(ctx context.Context) error {
		var err error
		n, err = q.f.client.LLen(ctx, q.f.crawlKey("queue")).Result()
		return err
	})
	return int(n), err
}
