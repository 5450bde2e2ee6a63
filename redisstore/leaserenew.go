package redisstore

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Renewal of in-flight leases. A lease on a host's in-flight place runs
// out a member's TTL after it was granted unless it is given back, so that
// the place of a member that died comes free (the fleet's
// in-flight count never stays taken). A live member renews the leases of
// its responses still running every third of that TTL, so that a response
// longer than the TTL (a slow host, colly's timeout raised above it) keeps
// its host's place, and no other member starts a request to the host while
// it runs; but never past the lease's own life (pace.Ask.Lease,
// DefaultLease: 2 min), as a pace.Memory's, so that a lease a live member
// never gives back (a leak) still runs out. A member that stops (a crash,
// SIGSTOP, a pause of the process) renews nothing: its leases run out a TTL
// after the last renewal, as the requests it holds are given back then.

// renewals are the leases a member's pacer was granted through Redis and
// has not given back, by host. Safe for concurrent use.
type renewals struct {
	// mu guards held, running, ctx and cancel.
	mu      sync.Mutex
	held    map[string]map[uint64]heldLease
	running bool // the renewing goroutine (renewLoop) runs
	// ctx ends when the Fleet is closed (closeRenewals): no renewing
	// goroutine starts then, and a renewal in flight stops waiting for
	// Redis.
	ctx    context.Context
	cancel context.CancelFunc
	// loops counts the renewing goroutines, for closeRenewals to wait for.
	loops sync.WaitGroup
	// emptied wakes the renewing goroutine when the last lease was given
	// back, so that it ends at once rather than at its next renewal.
	emptied chan struct{}
}

// A heldLease is how a lease is renewed: each time for ttl, up to until
// (on the member's clock), its life.
type heldLease struct {
	ttl   time.Duration
	until time.Time
}

// hold records lease of host, granted for ttl at most until life from now,
// and starts the renewing goroutine if it is not running.
func (p *pacer) hold(host string, lease uint64, ttl, life time.Duration) {
	r := &p.renew
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held == nil {
		r.held = make(map[string]map[uint64]heldLease)
		r.emptied = make(chan struct{}, 1)
	}
	if r.ctx == nil {
		r.ctx, r.cancel = context.WithCancel(context.Background())
	}
	ls := r.held[host]
	if ls == nil {
		ls = make(map[uint64]heldLease, 1)
		r.held[host] = ls
	}
	ls[lease] = heldLease{ttl: ttl, until: p.f.now().Add(life)}
	if !r.running && r.ctx.Err() == nil {
		r.running = true
		r.loops.Add(1)
		go p.renewLoop(r.ctx)
	}
}

// unhold forgets lease of host: it was given back, or it ran out.
func (p *pacer) unhold(host string, lease uint64) {
	r := &p.renew
	r.mu.Lock()
	defer r.mu.Unlock()
	ls := r.held[host]
	if ls == nil {
		return
	}
	delete(ls, lease)
	if len(ls) > 0 {
		return
	}
	delete(r.held, host)
	if len(r.held) == 0 {
		select {
		case r.emptied <- struct{}{}:
		default:
		}
	}
}

// snapshot returns the leases held and their TTLs, by host, or ends the
// renewing goroutine's turn (running false) when there are none.
func (p *pacer) snapshot() map[string]map[uint64]heldLease {
	r := &p.renew
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.held) == 0 {
		r.running = false
		return nil
	}
	out := make(map[string]map[uint64]heldLease, len(r.held))
	for host, ls := range r.held {
		out[host] = maps.Clone(ls)
	}
	return out
}

// renewLoop renews the leases held every third of the member's TTL (a
// lease lasts at most that), until none is held or ctx ends (the Fleet is
// closed).
func (p *pacer) renewLoop(ctx context.Context) {
	defer p.renew.loops.Done()
	every := p.f.memberTTL() / 3
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
		case <-p.renew.emptied:
		case <-t.C:
			t.Reset(every)
		}
		if ctx.Err() != nil { // checked again: select picks among ready cases at random
			p.renew.mu.Lock()
			p.renew.running = false
			p.renew.mu.Unlock()
			return
		}
		held := p.snapshot()
		if held == nil {
			return
		}
		rctx, cancel := context.WithTimeout(ctx, beatTimeout)
		p.renewAll(rctx, held)
		cancel()
	}
}

// renewAll renews the leases in held, one script per host in one
// pipeline. A lease Redis no longer has (it ran out while the member was
// stopped, or was given back meanwhile) is forgotten. A failed renewal
// is tried again at the next turn: the leases last a TTL, three turns.
func (p *pacer) renewAll(ctx context.Context, held map[string]map[uint64]heldLease) {
	keep := p.f.pacerIdle().Milliseconds()
	now := p.f.now()
	cmds := make(map[string]*redis.Cmd, len(held))
	_, err := p.f.client.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for host, ls := range held {
			args := make([]any, 0, 1+2*len(ls))
			args = append(args, keep)
			for id, l := range ls {
				left := l.until.Sub(now)
				if left <= 0 {
					// At the end of its life: it runs out where it is.
					p.unhold(host, id)
					continue
				}
				args = append(args, id, us(min(l.ttl, left)))
			}
			if len(args) > 1 {
				cmds[host] = renewScript.Eval(ctx, pipe, p.key(host), args...)
			}
		}
		return nil
	})
	p.f.seen(err)
	for host, cmd := range cmds {
		gone, err := cmd.Int64Slice()
		if err != nil {
			continue
		}
		for _, id := range gone {
			p.unhold(host, uint64(id))
		}
	}
}

// renewScript: KEYS[1] the host's hash, KEYS[2] its leases; ARGV keep_ms,
// then pairs of a lease id and its TTL in µs. Each lease still there runs
// out its TTL from now, never sooner than it did; both keys are kept at
// least that long (plus keep), never shorter. Returns the ids no longer
// there.
var renewScript = redis.NewScript(luaNow + `
local keep = tonumber(ARGV[1])
local gone = {}
local last = 0
for i = 2, #ARGV, 2 do
  local score = redis.call('ZSCORE', KEYS[2], ARGV[i])
  if score then
    local until_ = math.max(tonumber(score), now + tonumber(ARGV[i + 1]))
    redis.call('ZADD', KEYS[2], 'XX', until_, ARGV[i])
    last = math.max(last, until_)
  else
    gone[#gone + 1] = tonumber(ARGV[i])
  end
end
if last > 0 then
  local ms = math.ceil((last - now) / 1000) + keep
  for _, key in ipairs(KEYS) do
    local left = redis.call('PTTL', key)
    if left >= 0 and left < ms then redis.call('PEXPIRE', key, ms) end
  end
end
return gone
`)

// closeRenewals stops renewing and waits for the renewing goroutine to end.
func (p *pacer) closeRenewals() {
	r := &p.renew
	r.mu.Lock()
	if r.ctx == nil {
		r.ctx, r.cancel = context.WithCancel(context.Background())
	}
	r.cancel()
	r.mu.Unlock()
	r.loops.Wait()
}
