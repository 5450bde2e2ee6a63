// Package redisstore is robotsmw's fleet mode: many crawler processes, on
// one machine or many, share one Redis and crawl as one polite crawler.
//
// Each process makes a [Fleet] over the same Redis and [Fleet].Prefix,
// attaches it to its Guard, and gives colly the fleet's storage and
// queue:
//
//	fleet := redisstore.New(redis.NewClient(&redis.Options{Addr: addr}))
//	defer fleet.Close()
//	q, _ := queue.New(4, fleet.Queue())
//	g := &robotsmw.Guard{Agent: "MyBot", Rate: 2, Links: robotsmw.Links{Queue: fleet.Queue()}}
//	fleet.Attach(g)
//	c := colly.NewCollector(colly.AllowedDomains("example.com"), g.Attach)
//	c.SetStorage(fleet.Storage())
//	g.FollowLinks(c)
//	q.AddURL("https://example.com/")
//	err := fleet.Run(ctx, q, c) // until the fleet's queue is drained
//
// What the members share:
//
//   - robots.txt ([Fleet.Robots], a policy.Store and policy.Leaser): one
//     record per origin in a compact binary form with its state, expiry,
//     failures and last good copy (RFC 9309 §2.3.1.4, §2.4), fetched once
//     per expiry by the member that holds its SET NX PX lease, while the
//     others wait for the record; each member keeps the parsed rules in
//     memory, so a look-up costs no round trip while the record is fresh.
//   - each host's schedule, pauses and rate cuts ([Fleet.Pacer], a
//     pace.Pacer): one Lua script per request reserves the host's next
//     slot on Redis's own clock (GCRA, burst 1), so clock skew between
//     machines does not matter; a 429 or 503 seen by one member pauses
//     all (the pause merged with max, never shortened), the rate is cut
//     once per incident however many members see it, and the pause is
//     published so requests already waiting wake in every member. Every
//     key has a TTL beyond its pause, schedule and leases: a host that
//     holds nothing is forgotten [Fleet.PacerIdle] (10 minutes) after its
//     last response, as a pace.Memory forgets it after its Idle.
//   - the crawl's frontier ([Fleet.Queue], a queue.Storage): a queue per
//     host and a sorted set of hosts by the time each may go next, split
//     into shards of hosts, each shard in one Redis Cluster slot. A
//     request is queued once per crawl: the script that pushes it checks
//     and records its id (colly's) in the same step, and a page's links go
//     in one round trip with the page's end, which goes with the member's
//     next pop. A member pops the front
//     request of a host that may go now, so a paused or slow host's
//     requests wait in its queue instead of cycling through the others.
//     A popped request is held under a lease that the member's heartbeat
//     renews; when the member dies, any other member's next pop or
//     heartbeat gives it back, to the front of its host's queue (the one
//     it popped first in front), within two TTLs, and the member that pops
//     it lets it go before the host's schedule: it claims the host's next
//     lease. [Fleet.Run] returns once nothing is queued or held.
//   - the crawl's identity: every script checks the crawl's epoch, so a
//     member whose crawl vanished from Redis (a restart without
//     persistence) or was replaced stops with a [*CrawlLostError] rather
//     than reporting success on a crawl that lost its queue.
//   - the crawl's counts ([Fleet.Stats]): queued, in flight per host,
//     fetched, blocked, given up, deferred, duplicates, given back.
//
// Redis round trips per page fetched from the shared queue, as the wire
// sees them (a pipeline is one): about two. One pops the page, carrying
// the ends and links of the pages done since and the leases given back;
// one takes the page's place in its host's schedule and its lease at once
// when the host is free. [Fleet.Attach] puts what the member knows of each
// host in front of the shared schedule: the member's threads waiting for
// one host do not each ask Redis again and again, but wait for one answer
// and for the leases given back in the member, which go to Redis with its
// next round trip (the response's end counted from when it ended). None
// for colly's visited check (the request was deduplicated when queued),
// none for QueueSize, and none for robots.txt while its record is fresh.
// Measured by TestRoundTripsPerPage: 2.4 a page on one busy host (4
// threads), 2.8 on 1,000 hosts of 6 pages (robots.txt included).

// A server that does not speak Redis's protocol ends every call with an
// error wrapping [ErrNotRedis] at once; Run's ctx ends any wait for Redis.
// [Fleet].Politeness lets crawls with separate frontiers pace each host
// once, together.
//
// When Redis cannot be reached, or is full (it refuses writes with OOM:
// maxmemory under the noeviction policy), nothing runs at full speed and
// nothing is lost: with [Pause] (the default) requests are deferred and sent again
// once it answers; with [Slow] each member paces each host alone at its
// interval times the number of members. The queue and the visited set
// wait for Redis in either mode, and a call tried again after a lost
// reply keeps its effect exactly once. [Fleet].OnDown tells when Redis
// stops and starts answering (or taking writes: [ErrFull]), and
// [Fleet].Logger logs it at warning, for a full Redis with what to do.
//
// All keys start with the prefix (robots.txt and pacing with the
// politeness namespace); keys of one host or origin share a hash tag, and
// so do the keys of one frontier shard, so every script touches one slot
// of a Redis Cluster. New accepts any go-redis UniversalClient.
package redisstore
