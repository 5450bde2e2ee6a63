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
//     robotsmw.Pacer): one Lua script per request reserves the host's next
//     slot on Redis's own clock (GCRA, burst 1), so clock skew between
//     machines does not matter; a 429 or 503 seen by one member pauses
//     all (the pause merged with max, never shortened), the rate is cut
//     once per incident however many members see it, and the pause is
//     published so requests already waiting wake in every member. Every
//     key has a TTL beyond its pause and schedule.
//   - colly's frontier ([Fleet.Queue], a queue.Storage, and
//     [Fleet.Storage], a storage.Storage): one request list and one
//     visited set whose claim is atomic, so no URL is fetched twice.
//     [Fleet.Run] returns once the list is empty and no member is working.
//     What a member popped is held under its name until it ends; when the
//     member dies (its heartbeat silent for two TTLs while the others
//     reached Redis), another member puts it back in the queue, so a
//     killed member loses nothing it had taken.
//
// Redis round trips per request: one for the Guard (the slot), none for
// robots.txt while its record is fresh, two for colly's visited set
// (IsVisited, Visited), two for a queue pop (QueueSize, GetRequest) and
// one when the popped request ends.
//
// When Redis cannot be reached, nothing runs at full speed and nothing is
// lost: with [Pause] (the default) requests are deferred and sent again
// once it answers; with [Slow] each member paces each host alone at its
// interval times the number of members. The queue and the visited set
// wait for Redis in either mode, and a call tried again after a lost
// reply keeps its effect exactly once. [Fleet].OnDown tells when Redis
// stops and starts answering.
//
// All keys start with the prefix; keys of one host or origin share a hash
// tag, and so do the crawl's list, visited set and member sets, so every
// script touches one slot of a Redis Cluster.
package redisstore
