package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/robotsmw/robotsmw/pace"

	"github.com/redis/go-redis/v9"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// A host's pacing state is one Redis hash, f.politeKey("pace", "{host}"), with
// its times in microseconds on Redis's clock (TIME):
//
//	tat  the next free position (GCRA's theoretical arrival time, burst 1)
//	iv   the interval a cut set; 0 or absent when not cut
//	pu   the end of the pause in force
//	lc   when the last cut was made
//	ls   when the last lease was granted (the last request started)
//	le   when the last response ended
//	lat  the smoothed response time; 0 or absent when not known
//	nl   the last lease's id
//	fc   until when a request given back by a dead member claims the next
//	     lease (see reserveScript's front)
//	u:ID the URL of the request lease ID was granted to, while it is held
//	dl   the URLs (one a line) of the requests whose leases ran out
//	     unreturned: in flight when their member died; fd until when
//	     they go before the others given back, da until when one that
//	     asked claims the host's next lease (see reserveScript's front)
//
// and a sorted set, f.politeKey("lease", "{host}"), of the leases in flight:
// member the lease's id, score when it runs out. A lease whose member died
// runs out and is dropped by the next Reserve (the fleet's in-flight count
// never stays taken): a lease lasts no longer than a member's TTL (15 s),
// as the requests a member holds do, so the host of a killed member's
// requests is free again by the time they are given back. A live member
// renews the leases of its responses still running every third of that
// TTL (leaserenew.go), up to the lease's own life (DefaultLease), so a
// response longer than the TTL keeps its host's place. Both keys carry the host in braces, so they share a
// cluster slot. Each operation is one Lua script on those keys
// (one atomic read-modify-write per host, one clock — Redis's own TIME —,
// monotone merges), the same rules as pace.Memory's. Every
// write sets the hash's TTL to outlive what the host holds — its
// schedule, its pause and its leases — by Fleet.PacerIdle (pacerKeep by
// default), and its last response's end by as much, so a host that holds
// nothing expires PacerIdle after it went idle, as a pace.Memory forgets
// it after its Idle. A cut interval is held too, but not for ever (every
// key has a TTL): a cut host is kept pacerCutKeep past its last write.

// pacerKeep is how long a host's pacing state is kept after it holds
// nothing when Fleet.PacerIdle is zero.
const pacerKeep = 10 * time.Minute

// pacerCutKeep is how long a cut host's pacing state is kept after its
// last write (unless PacerIdle is longer), as a pace.Memory keeps it.
const pacerCutKeep = pace.CutKeep

// pacerIdle returns how long a host that holds nothing is kept.
func (f *Fleet) pacerIdle() time.Duration {
	if f.PacerIdle > 0 {
		return f.PacerIdle
	}
	return pacerKeep
}

// pacerCutIdle returns how long a cut host is kept after its last write.
func (f *Fleet) pacerCutIdle() time.Duration { return max(pacerCutKeep, f.pacerIdle()) }

// now_us reads Redis's clock in microseconds; Lua numbers are doubles,
// exact up to 2^53 µs (285 years).
const luaNow = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
`

// luaKeep defines keepUntil(t, keep): the host's hash (KEYS[1]) expires
// keep milliseconds after t (µs on Redis's clock; the end of what the
// host holds, or of its last response), or after its last lease in
// KEYS[2] runs out if that is later; at the earliest in a millisecond (a
// PEXPIRE of 0 would delete it under the script).
const luaKeep = `
local function keepUntil(t, keep)
  local z = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
  if z[2] then t = math.max(t, tonumber(z[2])) end
  redis.call('PEXPIRE', KEYS[1], math.max(math.ceil((t - now) / 1000) + keep, 1))
end
`

// reserveScript: KEYS[1] the host's hash, KEYS[2] its leases; ARGV
// floor_us, gap_us, latency factor, limit_us, in-flight, lease_us,
// positioned, nolease, keep_ms, max_latency_gap_us, busy_poll_us,
// min_busy_us, cut_keep_ms, front, claim_us, url, dead_claim_us, relay.
// Returns {reserved, lease, wait_us, interval_us, paused_us, latency_us,
// in_flight}. See pace.Pacer.Reserve.
//
// A lease is granted with the request's URL (u:ID), if known, until it is
// given back. A lease that runs out instead was held by a member that
// died with its request in flight: the URL goes to dl, and for
// dead_claim_us that request claims the host's next lease, before any
// other (fd).
//
// With front ("1"), the request was given back by a dead member: it goes
// before the host's schedule. It takes no position (as if positioned) and
// gets the next lease the host's rules allow, after those the requests in
// dl claim (unless it is one of them): the others given back wait while
// dl holds; until it does, it claims it (fc) for claim_us from each ask,
// and requests not given back get no lease while the claim holds. While
// dl holds, those claims (fc) are set aside, for the requests in dl
// claim the next lease (da) only once they ask: until then the requests
// not given back go on (a request in dl may need one of them to end to
// find a queue thread). With relay (a URL), front is set too: the
// request asks on behalf of the one given back to relay, which waits for
// its member's queue thread, held by this one: it passes the claims of dl
// as relay would, and leaves them (relay asks itself once the thread is
// free).
//
// A busy host's wait is the time until its response is expected to end
// and the gap after it; once that is overdue (a slow response, or a dead
// member's lease), the longer it is overdue the longer the wait, from
// min_busy_us up to busy_poll_us, and no later than the first lease runs
// out: a member whose thread waits for another member's response asks a
// few times, not a hundred times, a second.
var reserveScript = redis.NewScript(luaNow + luaKeep + `
local floor = tonumber(ARGV[1])
local gap = tonumber(ARGV[2])
local lf = tonumber(ARGV[3])
local limit = tonumber(ARGV[4])
local maxf = math.max(tonumber(ARGV[5]), 1)
local ttl = tonumber(ARGV[6])
local positioned = ARGV[7] == '1'
local nolease = ARGV[8] == '1'
local keep = tonumber(ARGV[9])
local busyPoll = tonumber(ARGV[11])
local minBusy = tonumber(ARGV[12])
local front = ARGV[14] == '1'
local url = ARGV[16] or ''
local relay = ARGV[18] or ''
if front then positioned = true end
local v = redis.call('HMGET', KEYS[1], 'tat', 'iv', 'pu', 'ls', 'le', 'lat', 'fc', 'fd', 'dl', 'da')
local fc = tonumber(v[7]) or 0
local fd = tonumber(v[8]) or 0
local dl = v[9] or ''
local da = tonumber(v[10]) or 0
local tat = tonumber(v[1]) or now
local cut = tonumber(v[2]) or 0
local iv = math.max(cut, floor)
if cut > 0 then keep = tonumber(ARGV[13]) end
local pu = tonumber(v[3]) or 0
local ls = tonumber(v[4]) or 0
local le = tonumber(v[5]) or 0
local lat = tonumber(v[6]) or 0
if fd <= now and dl ~= '' then
  dl = ''
  redis.call('HDEL', KEYS[1], 'dl', 'fd', 'da')
end
local out = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
if #out > 0 then
  for _, id in ipairs(out) do
    local u = redis.call('HGET', KEYS[1], 'u:' .. id)
    if u then
      redis.call('HDEL', KEYS[1], 'u:' .. id)
      if dl == '' then dl = u else dl = dl .. '\n' .. u end
      fd = now + tonumber(ARGV[17])
      redis.call('HSET', KEYS[1], 'dl', dl, 'fd', fd)
    end
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
end
local n = redis.call('ZCARD', KEYS[2])
local function busyWait(est)
  if est >= minBusy then return est end
  local w = math.min(math.max(minBusy, -est), busyPoll)
  local z = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  if z[2] then w = math.min(w, math.max(tonumber(z[2]) - now, minBusy)) end
  return w
end
local g = gap
if lf > 0 and lat > 0 then g = math.max(gap, math.min(math.floor(lat * lf), tonumber(ARGV[10]))) end
local paused = math.max(pu - now, 0)
if not positioned then
  local at = math.max(tat, now, pu)
  if at - now > limit then
    return {0, 0, at - now, iv, paused, lat, n}
  end
  local sp = math.max(iv, math.floor((lat + g) / maxf))
  tat = at + sp
  redis.call('HSET', KEYS[1], 'tat', tat)
  keepUntil(math.max(tat, pu, le, now), keep)
  if at > now or nolease then
    return {1, 0, at - now, iv, paused, lat, n}
  end
elseif pu > now then
  return {0, 0, pu - now, iv, paused, lat, n}
elseif nolease then
  return {1, 0, 0, iv, paused, lat, n}
end
local est = ls + lat + g - now
if lat == 0 then est = math.max(iv, busyPoll) end
local free = math.max(ls + iv, le + g)
local dead = false
if dl ~= '' then
  if front then
    local claim = url
    if relay ~= '' then claim = relay end
    dead = claim ~= '' and string.find('\n' .. dl .. '\n', '\n' .. claim .. '\n', 1, true) ~= nil
    if not dead then
      return {1, 0, math.max(math.min(busyWait(est), fd - now), minBusy), iv, paused, lat, n}
    end
  elseif da > now then
    return {1, 0, math.max(math.min(busyWait(est), da - now), minBusy), iv, paused, lat, n}
  end
elseif not front and fc > now then
  return {1, 0, math.max(math.min(busyWait(est), fc - now), minBusy), iv, paused, lat, n}
end
if front and (n >= maxf or free > now) then
  if dead then
    redis.call('HSET', KEYS[1], 'da', now + tonumber(ARGV[15]))
  else
    redis.call('HSET', KEYS[1], 'fc', now + tonumber(ARGV[15]))
  end
end
if n >= maxf then
  return {1, 0, busyWait(est), iv, paused, lat, n}
end
if free > now then
  return {1, 0, free - now, iv, paused, lat, n}
end
if dead and relay == '' then
  local rest = {}
  for u in string.gmatch(dl, '[^\n]+') do
    if u ~= url then rest[#rest + 1] = u end
  end
  if #rest == 0 then
    redis.call('HDEL', KEYS[1], 'dl', 'fd', 'da')
  else
    redis.call('HSET', KEYS[1], 'dl', table.concat(rest, '\n'))
  end
elseif front and not dead then
  redis.call('HDEL', KEYS[1], 'fc')
end
local id = redis.call('HINCRBY', KEYS[1], 'nl', 1)
redis.call('ZADD', KEYS[2], now + ttl, id)
redis.call('PEXPIRE', KEYS[2], math.ceil(ttl / 1000) + keep)
redis.call('HSET', KEYS[1], 'ls', now)
if url ~= '' then redis.call('HSET', KEYS[1], 'u:' .. id, url) end
keepUntil(math.max(tat, pu, le, now), keep)
return {1, id, 0, iv, paused, lat, n + 1}
`)

// leaseReleaseScript: KEYS[1] the host's hash, KEYS[2] its leases; ARGV lease,
// latency_us, failed, unsent, floor_us, keep_ms, cut_keep_ms, and
// optionally ago_us: how long before the call the response ended (a
// release sent with the member's next round trip; never before the end
// already recorded). Gives the lease back, records the end and smooths
// the latency as
// pace.Memory does (a slowdown at once, a recovery a quarter of
// the way per response, a failure never lowers it), and sets the TTL from
// what the host still holds: a lease given back holds it no longer.
// Returns {interval_us, paused_us, latency_us, in_flight}.
var leaseReleaseScript = redis.NewScript(luaNow + luaKeep + `
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[1], 'u:' .. ARGV[1])
local sample = tonumber(ARGV[2])
local floor = tonumber(ARGV[5])
local v = redis.call('HMGET', KEYS[1], 'iv', 'pu', 'lat', 'tat', 'le')
local cut = tonumber(v[1]) or 0
local iv = math.max(cut, floor)
local pu = tonumber(v[2]) or 0
local lat = tonumber(v[3]) or 0
local le = tonumber(v[5]) or 0
if ARGV[4] ~= '1' then
  if sample > 0 then
    if sample >= lat then lat = sample
    elseif ARGV[3] ~= '1' then lat = lat - math.floor((lat - sample) / 4)
    end
  end
  local ended = now - math.max(tonumber(ARGV[8] or '0'), 0)
  le = math.max(le, ended)
  redis.call('HSET', KEYS[1], 'le', le, 'lat', lat)
end
local keep = tonumber(ARGV[6])
if cut > 0 then keep = tonumber(ARGV[7]) end
keepUntil(math.max(tonumber(v[4]) or 0, pu, le), keep)
return {iv, math.max(pu - now, 0), lat, redis.call('ZCARD', KEYS[2])}
`)

// strikeScript: KEYS[1] the host's hash; ARGV pause_us, factor, floor_us,
// ceiling_us, from_us, keep_ms, channel, host, cut_keep_ms. Merges the
// pause with max, cuts the interval once per incident (a strike while the host is not
// paused) and at most once per interval, voids the schedule up to the
// pause's end, and publishes the result. Returns {interval_us, paused_us}.
var strikeScript = redis.NewScript(luaNow + `
local pause = tonumber(ARGV[1])
local factor = tonumber(ARGV[2])
local floor = tonumber(ARGV[3])
local ceil = tonumber(ARGV[4])
local from = tonumber(ARGV[5])
local v = redis.call('HMGET', KEYS[1], 'tat', 'iv', 'pu', 'lc')
local tat = tonumber(v[1]) or now
local cut = tonumber(v[2]) or 0
local pu = tonumber(v[3]) or 0
local lc = tonumber(v[4]) or 0
local incident = now >= pu
pu = math.max(pu, now + pause)
local iv = math.max(cut, floor)
if incident and factor > 1 and (lc == 0 or now - lc >= iv) then
  local base = iv
  if base == 0 then base = from end
  cut = math.min(math.floor(base * factor), math.max(ceil, floor))
  lc = now
end
if pu > now then tat = pu end -- positions before the pause's end are void
redis.call('HSET', KEYS[1], 'tat', tat, 'iv', cut, 'pu', pu, 'lc', lc)
local keep = tonumber(ARGV[6])
if cut > 0 then keep = tonumber(ARGV[9]) end
local kept = redis.call('PTTL', KEYS[1])
redis.call('PEXPIRE', KEYS[1], math.max(kept, math.ceil((math.max(tat, pu) - now) / 1000) + keep))
iv = math.max(cut, floor)
redis.call('PUBLISH', ARGV[7], string.format('%d %d %s', pu - now, iv, ARGV[8]))
return {iv, pu - now}
`)

// recoverScript: KEYS[1] the host's hash, KEYS[2] its leases; ARGV
// interval_us, floor_us, keep_ms, cut_keep_ms. Lowers a cut interval,
// never raises it, and only while the host is not paused and its last cut
// is at least one interval old: a member that has not yet heard of
// another member's fresh cut cannot undo it with a step computed from the
// interval before. A host no longer cut is kept only as long as what else
// it holds. Returns {interval_us, paused_us}.
var recoverScript = redis.NewScript(luaNow + luaKeep + `
local to = tonumber(ARGV[1])
local floor = tonumber(ARGV[2])
local v = redis.call('HMGET', KEYS[1], 'iv', 'pu', 'lc', 'tat', 'le')
local cut = tonumber(v[1]) or 0
local pu = tonumber(v[2]) or 0
local lc = tonumber(v[3]) or 0
if v[1] and now >= pu and now - lc >= math.max(cut, floor) then
  if to < cut then cut = to end
  if cut <= floor then cut = 0 end
  redis.call('HSET', KEYS[1], 'iv', cut)
  if cut > 0 then
    redis.call('PEXPIRE', KEYS[1], math.max(redis.call('PTTL', KEYS[1]), tonumber(ARGV[4])))
  else
    keepUntil(math.max(tonumber(v[4]) or 0, pu, tonumber(v[5]) or 0), tonumber(ARGV[3]))
  end
end
return {math.max(cut, floor), math.max(pu - now, 0)}
`)

// A pacer is a Fleet's pace.Pacer.
type pacer struct {
	f *Fleet

	// local paces hosts while Redis is down and WhenDown is Slow.
	local pace.Memory

	// renew renews the leases granted through Redis while their
	// responses run (leaserenew.go).
	renew renewals

	// mu guards watchers, nextID, sub and done.
	mu       sync.Mutex
	watchers map[int]func(string, pace.State)
	nextID   int
	sub      *redis.PubSub
	done     chan struct{} // closed when the watching goroutine ends
}

func newPacer(f *Fleet) *pacer {
	p := &pacer{f: f}
	p.local.Idle = f.PacerIdle // 0: the pace.Memory's own default
	return p
}

// Pacer returns the Fleet's pace.Pacer: each host's schedule, pauses
// and rate cuts shared by every member through Redis. Set it as
// Guard.Pacer (Attach does).
func (f *Fleet) Pacer() pace.Pacer {
	f.init()
	return f.pacer
}

func (p *pacer) key(host string) []string {
	return []string{p.f.politeKey("pace", tag(host)), p.f.politeKey("lease", tag(host))}
}

func (p *pacer) channel() string { return p.f.politeKey("pace", "events") }

func us(d time.Duration) int64 { return d.Microseconds() }

func fromUS(v int64) time.Duration { return time.Duration(v) * time.Microsecond }

// ints returns the integers of a script's reply.
func ints(v any, n int) ([]int64, error) {
	a, ok := v.([]any)
	if !ok || len(a) != n {
		return nil, fmt.Errorf("redisstore: unexpected script reply %v", v)
	}
	out := make([]int64, n)
	for i, x := range a {
		if out[i], ok = x.(int64); !ok {
			return nil, fmt.Errorf("redisstore: unexpected script reply %v", v)
		}
	}
	return out, nil
}

// slowFloor returns floor as paced alone under Slow.
func (p *pacer) slowFloor(floor time.Duration) time.Duration {
	n := int64(p.f.SlowFactor)
	if n <= 0 {
		n = p.f.members.Load()
	}
	if n <= 0 {
		n = 4
	}
	return floor * time.Duration(n)
}

// Reserve implements pace.Pacer: one EVALSHA.
func (p *pacer) Reserve(ctx context.Context, host string, a pace.Ask) (pace.Slot, error) {
	v, err := reserveScript.Run(ctx, p.f.client, p.key(host), p.reserveArgs(a, false, "")...).Result()
	return p.reserved(ctx, host, a, v, err)
}

// frontClaim is how long a request given back by a dead member claims
// its host's next lease from each of its asks (see reserveScript).
const frontClaim = 3 * time.Second

// reserveArgs returns reserveScript's ARGV for a; front for a request
// given back by a dead member, or one asking on behalf of relay (a URL).
func (p *pacer) reserveArgs(a pace.Ask, front bool, relay string) []any {
	// A lease lasts no longer than a member's TTL unless renewed: the
	// member renews it while its response runs (leaserenew.go).
	ttl := min(leaseTTL(a.Lease), p.f.memberTTL())
	return []any{us(a.Floor), us(a.Gap), strconv.FormatFloat(a.Latency, 'g', -1, 64), us(a.Limit), max(a.InFlight, 1),
		us(ttl), flag(a.Positioned), flag(a.NoLease), p.f.pacerIdle().Milliseconds(),
		us(pace.MaxLatencyGap), us(busyPoll), us(minBusyWait), p.f.pacerCutIdle().Milliseconds(),
		flag(front), us(frontClaim), askURL(a), us(p.deadClaim()), relay}
}

// askURL returns a's request URL, "" if not known.
func askURL(a pace.Ask) string {
	if a.URL == nil {
		return ""
	}
	return a.URL.String()
}

// deadClaim is how long the requests that a dead member had in flight
// claim their hosts' next leases once their leases ran out: a member TTL
// (at least frontClaim), time for a live member to pop them again (they
// were given back by then, see lease.go).
func (p *pacer) deadClaim() time.Duration { return max(p.f.memberTTL(), frontClaim) }

// reserved returns the Slot of reserveScript's reply v (or error err) to
// a.
func (p *pacer) reserved(ctx context.Context, host string, a pace.Ask, v any, err error) (pace.Slot, error) {
	ttl := min(leaseTTL(a.Lease), p.f.memberTTL())
	p.f.seen(err)
	if err != nil {
		if isDown(err) && p.f.WhenDown == Slow {
			a.Floor = p.slowFloor(a.Floor)
			return p.local.Reserve(ctx, host, a)
		}
		return pace.Slot{}, fmt.Errorf("redisstore: reserving a slot for %s: %w", host, err)
	}
	r, err := ints(v, 7)
	if err != nil {
		return pace.Slot{}, err
	}
	if r[1] != 0 {
		p.hold(host, uint64(r[1]), ttl, leaseTTL(a.Lease))
	}
	return pace.Slot{
		Reserved: r[0] == 1,
		Lease:    uint64(r[1]),
		LeaseTTL: ttl,
		Wait:     fromUS(r[2]),
		State:    pace.State{Interval: fromUS(r[3]), Paused: fromUS(r[4]), Latency: fromUS(r[5]), InFlight: int(r[6])},
	}, nil
}

// Busy hosts are asked again after these (robotsmw's own values).
const (
	busyPoll    = 250 * time.Millisecond
	minBusyWait = 10 * time.Millisecond
)

// leaseTTL returns how long a lease asked for with d lasts.
func leaseTTL(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return pace.DefaultLease
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// Release implements pace.Pacer: one EVALSHA. A lease given back
// while Redis is down runs out there instead.
func (p *pacer) Release(ctx context.Context, host string, r pace.Release) (pace.State, error) {
	if r.Lease != 0 {
		p.unhold(host, r.Lease)
	}
	v, err := leaseReleaseScript.Run(ctx, p.f.client, p.key(host), p.releaseArgs(r, 0)...).Result()
	return p.released(ctx, host, r, v, err)
}

// releaseArgs returns leaseReleaseScript's ARGV for r, whose response
// ended ago before the call.
func (p *pacer) releaseArgs(r pace.Release, ago time.Duration) []any {
	return []any{r.Lease, us(r.Latency), flag(r.Failed), flag(r.Unsent), us(r.Floor),
		p.f.pacerIdle().Milliseconds(), p.f.pacerCutIdle().Milliseconds(), us(ago)}
}

// released returns the Pace of leaseReleaseScript's reply v (or error
// err) to r.
func (p *pacer) released(ctx context.Context, host string, r pace.Release, v any, err error) (pace.State, error) {
	p.f.seen(err)
	if err != nil {
		if isDown(err) && p.f.WhenDown == Slow {
			return p.local.Release(ctx, host, r)
		}
		return pace.State{}, fmt.Errorf("redisstore: giving back a lease of %s: %w", host, err)
	}
	x, err := ints(v, 4)
	if err != nil {
		return pace.State{}, err
	}
	return pace.State{Interval: fromUS(x[0]), Paused: fromUS(x[1]), Latency: fromUS(x[2]), InFlight: int(x[3])}, nil
}

// Strike implements pace.Pacer: one EVALSHA, which also tells every
// member (PUBLISH).
func (p *pacer) Strike(ctx context.Context, host string, s pace.Strike) (pace.State, error) {
	v, err := strikeScript.Run(ctx, p.f.client, p.key(host),
		us(s.Pause), strconv.FormatFloat(s.Factor, 'g', -1, 64), us(s.Floor), us(s.Ceiling), us(s.From),
		p.f.pacerIdle().Milliseconds(), p.channel(), host, p.f.pacerCutIdle().Milliseconds()).Result()
	p.f.seen(err)
	if err != nil {
		if isDown(err) && p.f.WhenDown == Slow {
			s.Floor = p.slowFloor(s.Floor)
			return p.local.Strike(ctx, host, s)
		}
		return pace.State{}, fmt.Errorf("redisstore: reporting a strike of %s: %w", host, err)
	}
	r, err := ints(v, 2)
	if err != nil {
		return pace.State{}, err
	}
	return pace.State{Interval: fromUS(r[0]), Paused: fromUS(r[1])}, nil
}

// Recover implements pace.Pacer.
func (p *pacer) Recover(ctx context.Context, host string, interval, floor time.Duration) (pace.State, error) {
	v, err := recoverScript.Run(ctx, p.f.client, p.key(host), us(interval), us(floor),
		p.f.pacerIdle().Milliseconds(), p.f.pacerCutIdle().Milliseconds()).Result()
	p.f.seen(err)
	if err != nil {
		return pace.State{}, fmt.Errorf("redisstore: reporting recovery of %s: %w", host, err)
	}
	r, err := ints(v, 2)
	if err != nil {
		return pace.State{}, err
	}
	return pace.State{Interval: fromUS(r[0]), Paused: fromUS(r[1])}, nil
}

// Watch implements pace.Pacer. The first call subscribes to the
// fleet's pace channel, on one goroutine that Close ends; go-redis
// subscribes again after a lost connection.
func (p *pacer) Watch(fn func(host string, pc pace.State)) (stop func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.watchers == nil {
		p.watchers = make(map[int]func(string, pace.State))
	}
	id := p.nextID
	p.nextID++
	p.watchers[id] = fn
	if p.sub == nil {
		select {
		case <-p.f.closed:
		default:
			p.sub = p.f.client.Subscribe(context.Background(), p.channel())
			p.done = make(chan struct{})
			go p.listen(p.sub.Channel(), p.done)
		}
	}
	// The Slow fallback's strikes reach the same watchers.
	stopLocal := p.local.Watch(fn)
	return func() {
		stopLocal()
		p.mu.Lock()
		defer p.mu.Unlock()
		delete(p.watchers, id)
	}
}

// listen passes the pace channel's messages to the watchers until ch
// closes.
func (p *pacer) listen(ch <-chan *redis.Message, done chan struct{}) {
	defer close(done)
	for m := range ch {
		paused, iv, host, ok := parseEvent(m.Payload)
		if !ok {
			continue
		}
		p.tell(host, pace.State{Interval: iv, Paused: paused})
	}
}

// tell calls the watchers with pc for host.
func (p *pacer) tell(host string, pc pace.State) {
	p.mu.Lock()
	fns := make([]func(string, pace.State), 0, len(p.watchers))
	for _, fn := range p.watchers {
		fns = append(fns, fn)
	}
	p.mu.Unlock()
	for _, fn := range fns {
		fn(host, pc)
	}
}

// parseEvent parses "PAUSED_US INTERVAL_US HOST", as the strike script
// publishes it: two durations in microseconds, not negative and within a
// time.Duration, and a host name.
func parseEvent(s string) (paused, interval time.Duration, host string, ok bool) {
	const maxUS = int64(1<<63-1) / int64(time.Microsecond)
	a, rest, ok1 := strings.Cut(s, " ")
	b, host, ok2 := strings.Cut(rest, " ")
	pa, err1 := strconv.ParseInt(a, 10, 64)
	iv, err2 := strconv.ParseInt(b, 10, 64)
	if !ok1 || !ok2 || err1 != nil || err2 != nil || host == "" ||
		pa < 0 || iv < 0 || pa > maxUS || iv > maxUS {
		return 0, 0, "", false
	}
	return fromUS(pa), fromUS(iv), host, true
}

// close ends the watching goroutine.
func (p *pacer) close() {
	p.closeRenewals()
	p.mu.Lock()
	sub, done := p.sub, p.done
	p.sub = nil
	p.mu.Unlock()
	if sub != nil {
		_ = sub.Close()
		<-done
	}
}

// Attach makes g share the fleet's robots.txt records and per-host pacing:
// it sets g.RobotsStore, and g.Pacer to the fleet's shared schedule with
// what this member knows of it in front (see the package documentation's
// round trips), so that the member's threads waiting for one host do not
// each ask Redis again and again. Call it before g's first request. The
// collector's visited set and queue are set on the collector and the
// queue (Storage, Queue).
func (f *Fleet) Attach(g *robotsmw.Guard) {
	g.RobotsStore = f.Robots()
	f.init()
	g.Pacer = f.member
	f.guard.Store(g) // the frontier's host gap follows g.Rate
}
