package redisstore

import (
	"github.com/redis/go-redis/v9"
)

// The frontier: the crawl's requests in Redis, split into shards. Every
// host belongs to one shard (FNV-32a of its name, modulo the shard
// count), and every key of a shard carries the shard's hash tag, so each
// script below touches one Redis Cluster slot. A shard's keys, after
// base = "PREFIX:{PREFIX#N}:":
//
//	base.."meta"     hash: epoch (the crawl's identity), pending (requests
//	                 queued), last (when a member last reached the shard,
//	                 ms on Redis's clock), pop:MEMBER (the member's last
//	                 pop, for a retried call) and the fleet-wide counts
//	base.."ready"    sorted set of hosts with queued requests, scored by
//	                 when (ms on Redis's clock) the host may go next
//	base.."q:"..HOST..":"..L
//	                 list of the host's requests of level L (0 to f, hex:
//	                 the request's priority, or its depth up to 15),
//	                 oldest first; a host's lowest level goes first, and
//	                 requests given back by a dead member go to the front
//	                 of theirs
//	base.."n"        hash: requests queued per host
//	base.."s:"..B    hash: the ids of every request ever queued (dedupe at
//	                 enqueue), in buckets (4096 over all shards) so that
//	                 each stays a small listpack (about 12 bytes an id)
//	base.."m"        sorted set of members, scored by the deadline (ms) of
//	                 their leases: the last heartbeat plus the TTL
//	base.."hz:"..M   sorted set of the requests member M holds
//	                 ("HOST\nITEM"), scored by when (ms) it popped them
//	                 (base.."h:"..M, a set, before: still read, so that a
//	                 member of the version before can be given back)
//	base.."f"        hash: requests in flight per host
//
// Every script starts by checking the crawl's epoch (luaEpoch): a shard
// whose state vanished (Redis restarted empty) or was replaced by another
// crawl's answers {-1, found}, and the member stops with a
// *CrawlLostError instead of going on with a crawl that lost its queue.

// seenBuckets is the number of hashes the seen ids of a crawl are spread
// over, split between the shards. Redis keeps a hash of up to 128 short
// fields (hash-max-listpack-entries) as a listpack: a crawl holds half a
// million ids before its buckets grow into hash tables, which take about
// 60 bytes an id rather than 12.
const seenBuckets = 4096

// luaEpoch checks the crawl's identity: KEYS[1] is the shard's meta hash,
// ARGV[1] the shard's key base, ARGV[2] the epoch the member joined. It
// sets now to Redis's clock in ms.
const luaEpoch = `
local base = ARGV[1]
local cur = redis.call('HGET', KEYS[1], 'epoch')
if cur ~= ARGV[2] then
	return {-1, cur or ''}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// luaGiveBack defines giveBack(member): it puts the requests the member
// holds back at the front of their hosts' queues, ready at once, the one
// it popped first (its request in flight, as a rule: a member's requests
// to a host take their places in the host's schedule in the order it pops
// them) in front, removes the member, and returns how many it gave back.
// Each goes back marked (a "!" before its item) so that the member that
// pops it lets it go before the host's schedule (see popScript). It needs
// base and now.
const luaGiveBack = `
local function giveBack(m)
	local hk = base .. 'hz:' .. m
	local back = 0
	local held = redis.call('SMEMBERS', base .. 'h:' .. m)
	local byTime = redis.call('ZRANGE', hk, 0, -1)
	for i = #byTime, 1, -1 do
		held[#held + 1] = byTime[i]
	end
	for _, e in ipairs(held) do
		local nl = string.find(e, '\n', 1, true)
		local host = string.sub(e, 1, nl - 1)
		local item = string.sub(e, nl + 1)
		redis.call('LPUSH', base .. 'q:' .. host .. ':' .. string.sub(item, 1, 1), '!' .. item)
		redis.call('HINCRBY', base .. 'n', host, 1)
		redis.call('ZADD', base .. 'ready', 'LT', now, host)
		if redis.call('HINCRBY', base .. 'f', host, -1) <= 0 then
			redis.call('HDEL', base .. 'f', host)
		end
		back = back + 1
	end
	redis.call('DEL', hk, base .. 'h:' .. m)
	redis.call('ZREM', base .. 'm', m)
	redis.call('HDEL', KEYS[1], 'pop:' .. m)
	if back > 0 then
		redis.call('HINCRBY', KEYS[1], 'pending', back)
	end
	return back
end
`

// luaTend renews member ARGV[4] for ARGV[3] ms (its lease deadline) and
// gives back the requests of members whose deadline passed: each goes to
// the front of its host's queue, and the host is ready at once. If no
// member reached the shard for half a TTL, Redis was away (an outage, or
// a restart from its append-only file): the deadlines move on by the gap,
// so that a fleet that could not renew loses nothing to its own silence.
// ARGV[5] is "1" if the member renewed here before: gone is then 1 when
// its registration had been removed (its requests given to others).
const luaTend = `
local ttl = tonumber(ARGV[3])
local me = ARGV[4]
local mk = base .. 'm'
local last = tonumber(redis.call('HGET', KEYS[1], 'last') or now)
if now - last > ttl / 2 then
	for _, m in ipairs(redis.call('ZRANGE', mk, 0, -1)) do
		redis.call('ZINCRBY', mk, now - last, m)
	end
end
redis.call('HSET', KEYS[1], 'last', now)
local gone = 0
if me ~= '' then
	if not redis.call('ZSCORE', mk, me) and ARGV[5] == '1' then
		gone = 1
	end
	redis.call('ZADD', mk, now + ttl, me)
	redis.call('PEXPIRE', mk, 20 * ttl)
end
local back = 0
for _, d in ipairs(redis.call('ZRANGEBYSCORE', mk, '-inf', '(' .. now)) do
	back = back + giveBack(d)
end
if back > 0 then
	redis.call('HINCRBY', KEYS[1], 'returned', back)
end
local pending = tonumber(redis.call('HGET', KEYS[1], 'pending') or '0')
`

// luaWait sets wait to the ms until the shard's next host is ready, or -1
// if no host has queued requests.
const luaWait = `
local wait = -1
local nx = redis.call('ZRANGE', base .. 'ready', 0, 0, 'WITHSCORES')
if #nx > 0 then
	wait = math.max(tonumber(nx[2]) - now, 0)
end
`

// joinScript: KEYS[1] a shard's meta hash; ARGV[1] the epoch to set if
// the shard has none, ARGV[2] the keep ms, ARGV[3] the member's shard
// count. Returns the shard's epoch and the shard count of the member
// that started the crawl.
var joinScript = redis.NewScript(`
if redis.call('HSETNX', KEYS[1], 'epoch', ARGV[1]) == 1 then
	redis.call('HSET', KEYS[1], 'shards', ARGV[3])
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return redis.call('HMGET', KEYS[1], 'epoch', 'shards')
`)

// popScript: luaEpoch, luaTend; ARGV[6] the call's token, ARGV[7] the gap
// (ms) before the popped host may go again, ARGV[8] the keep ms. Of the
// hosts whose ready time is past (the 16 earliest), it pops the front
// request of the one whose best request has the highest priority (ties:
// the earliest ready), holds it for the member (base.."hz:"..member) and
// returns {1, "HOST\nITEM", pending, 0, gone, returned} (returned: 1 for a
// request a dead member gave back); {0, "", pending, wait, gone} if no
// host may go now; {2, ...} to ask again. A call tried again because its
// reply was lost gets the same request.
var popScript = redis.NewScript(luaEpoch + luaGiveBack + luaTend + `
local token = ARGV[6] .. '\n'
local lastpop = redis.call('HGET', KEYS[1], 'pop:' .. me)
if lastpop and string.sub(lastpop, 1, #token) == token then
	return {1, string.sub(lastpop, #token + 1), pending, 0, gone}
end
local r = redis.call('ZRANGEBYSCORE', base .. 'ready', '-inf', now, 'LIMIT', 0, 16)
if #r == 0 then
` + luaWait + `
	return {0, '', pending, wait, gone}
end
-- Of the hosts that may go now (the 16 ready longest), the one whose best
-- queued request has the highest priority (the lowest level) goes; a tie
-- goes to the host ready longest.
local host, best = r[1], 16
for _, h in ipairs(r) do
	for lv = 0, best - 1 do
		if redis.call('LLEN', base .. 'q:' .. h .. ':' .. string.format('%x', lv)) > 0 then
			host, best = h, lv
			break
		end
	end
	if best == 0 then
		break
	end
end
local item
for lv = 0, 15 do
	item = redis.call('LPOP', base .. 'q:' .. host .. ':' .. string.format('%x', lv))
	if item then
		break
	end
end
local returned = 0
if item and string.sub(item, 1, 1) == '!' then
	item, returned = string.sub(item, 2), 1
end
if not item then
	redis.call('ZREM', base .. 'ready', host)
	redis.call('HDEL', base .. 'n', host)
	return {2, '', pending, 0, gone}
end
if redis.call('HINCRBY', base .. 'n', host, -1) <= 0 then
	redis.call('HDEL', base .. 'n', host)
	redis.call('ZREM', base .. 'ready', host)
else
	redis.call('ZADD', base .. 'ready', now + tonumber(ARGV[7]), host)
end
local e = host .. '\n' .. item
local hk = base .. 'hz:' .. me
redis.call('ZADD', hk, now, e)
redis.call('PEXPIRE', hk, ARGV[8])
redis.call('HINCRBY', base .. 'f', host, 1)
redis.call('PEXPIRE', base .. 'f', ARGV[8])
pending = redis.call('HINCRBY', KEYS[1], 'pending', -1)
redis.call('HSET', KEYS[1], 'pop:' .. me, token .. e)
return {1, e, pending, 0, gone, returned}
`)

// stepScript: luaEpoch, luaTend. Returns {pending, held, wait, gone,
// live}: held is the number of requests members hold, live the number
// of live members.
var stepScript = redis.NewScript(luaEpoch + luaGiveBack + luaTend + luaWait + `
local held = 0
for _, n in ipairs(redis.call('HVALS', base .. 'f')) do
	held = held + tonumber(n)
end
return {pending, held, wait, gone, redis.call('ZCOUNT', mk, now, '+inf')}
`)

// commitScript: luaEpoch; ARGV[3] the member, ARGV[4] the keep ms,
// ARGV[5] the most requests the shard queues, ARGV[6] a held request
// that ended ("" if none), ARGV[7] the count it adds to if the member
// still held it (it was not given to others meanwhile),
// then groups of ARGV: host, seen bucket, id, item, "1" for the front of
// the host's queue. A request whose id was seen before is dropped; one
// beyond the limit is refused (and not marked seen). Returns {acked,
// pending, added, duplicates, refused}.
var commitScript = redis.NewScript(luaEpoch + `
local me, keep, limit = ARGV[3], ARGV[4], tonumber(ARGV[5])
local acked = 0
if ARGV[6] ~= '' then
	acked = redis.call('ZREM', base .. 'hz:' .. me, ARGV[6])
	if acked == 0 then
		acked = redis.call('SREM', base .. 'h:' .. me, ARGV[6])
	end
	if acked == 1 then
		local host = string.sub(ARGV[6], 1, string.find(ARGV[6], '\n', 1, true) - 1)
		if redis.call('HINCRBY', base .. 'f', host, -1) <= 0 then
			redis.call('HDEL', base .. 'f', host)
		end
		if ARGV[7] ~= '' then
			redis.call('HINCRBY', KEYS[1], ARGV[7], 1)
		end
	end
end
local pending = tonumber(redis.call('HGET', KEYS[1], 'pending') or '0')
local added, dup, full = 0, 0, 0
local touched, hosts = {}, {}
for i = 8, #ARGV, 5 do
	local host, sk, id = ARGV[i], base .. 's:' .. ARGV[i + 1], ARGV[i + 2]
	if redis.call('HSETNX', sk, id, '') == 0 then
		dup = dup + 1
	elseif pending >= limit then
		redis.call('HDEL', sk, id)
		full = full + 1
	else
		touched[sk] = true
		local qk = base .. 'q:' .. host .. ':' .. string.sub(ARGV[i + 3], 1, 1)
		redis.call('HINCRBY', base .. 'n', host, 1)
		if ARGV[i + 4] == '1' then
			redis.call('LPUSH', qk, ARGV[i + 3])
		else
			redis.call('RPUSH', qk, ARGV[i + 3])
		end
		touched[qk] = true
		hosts[host] = true
		pending = pending + 1
		added = added + 1
	end
end
for k in pairs(touched) do
	redis.call('PEXPIRE', k, keep)
end
for host in pairs(hosts) do
	redis.call('ZADD', base .. 'ready', 'NX', now, host)
end
if added > 0 then
	redis.call('PEXPIRE', base .. 'n', keep)
end
if added + dup + full > 0 then
	redis.call('HSET', KEYS[1], 'pending', pending)
	redis.call('HINCRBY', KEYS[1], 'added', added)
	redis.call('HINCRBY', KEYS[1], 'duplicates', dup)
	redis.call('HINCRBY', KEYS[1], 'refused', full)
	redis.call('PEXPIRE', base .. 'ready', keep)
end
redis.call('PEXPIRE', KEYS[1], keep)
return {acked, pending, added, dup, full}
`)

// deferScript: luaEpoch; ARGV[3] a host, ARGV[4] when (ms on Redis's
// clock, from now) it may go next. The host's ready time moves later,
// never earlier, so that members stop popping a paused host's requests.
var deferScript = redis.NewScript(luaEpoch + `
redis.call('ZADD', base .. 'ready', 'XX', 'GT', now + tonumber(ARGV[4]), ARGV[3])
redis.call('HINCRBY', KEYS[1], 'deferred', 1)
return {1}
`)

// leaveScript: luaEpoch; ARGV[3] the member. Gives back what the member
// still holds, to the front of its hosts' queues, and removes it.
var leaveScript = redis.NewScript(luaEpoch + luaGiveBack + `
return {giveBack(ARGV[3])}
`)

// clearShardScript: KEYS[1] a shard's meta hash, ARGV[1] its base.
// Deletes the shard's keys unless a member's deadline has not passed;
// returns the number of such members.
var clearShardScript = redis.NewScript(`
local base = ARGV[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local live = redis.call('ZCOUNT', base .. 'm', now, '+inf')
if live > 0 then
	return live
end
for _, host in ipairs(redis.call('HKEYS', base .. 'n')) do
	for lv = 0, 15 do
		redis.call('DEL', base .. 'q:' .. host .. ':' .. string.format('%x', lv))
	end
end
for _, m in ipairs(redis.call('ZRANGE', base .. 'm', 0, -1)) do
	redis.call('DEL', base .. 'h:' .. m, base .. 'hz:' .. m)
end
for b = 0, tonumber(ARGV[2]) - 1 do
	redis.call('DEL', base .. 's:' .. b)
end
redis.call('DEL', KEYS[1], base .. 'ready', base .. 'm', base .. 'f', base .. 'n')
return 0
`)
