package redisstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// FleetStats are the crawl's counts kept in Redis, summed over the
// frontier's shards: any member (or a program that is no member, like
// examples/fleet -stats) reads the same numbers. A FleetStats is a copy,
// owned by the caller.
type FleetStats struct {
	// Epoch is the crawl's identity, "" if Redis holds no crawl under
	// the prefix.
	Epoch string
	// Members is the number of members registered: live ones, and dead
	// ones whose requests were not given back yet.
	Members int64
	// Queued is the number of requests waiting; InFlight the number
	// members hold (popped, not ended), and per host in InFlightByHost.
	Queued, InFlight int64
	InFlightByHost   map[string]int64
	// Added counts the requests queued, Duplicates those dropped at
	// enqueue as seen before, Refused those beyond MaxQueue.
	Added, Duplicates, Refused int64
	// Fetched counts the requests that got a response, Blocked those
	// robots.txt disallowed, GaveUp those that failed for good, Dropped
	// those colly refused after the pop (a filter, MaxDepth).
	Fetched, Blocked, GaveUp, Dropped int64
	// Deferred counts the deferrals that moved a host's ready time;
	// Returned the requests given back after their member died.
	Deferred, Returned int64
}

// Stats reads the crawl's counts from Redis in one round trip. It does
// not wait for Redis.
func (f *Fleet) Stats(ctx context.Context) (FleetStats, error) {
	f.init()
	n := f.shards()
	metas := make([]*redis.MapStringStringCmd, n)
	flights := make([]*redis.MapStringStringCmd, n)
	members := make([]*redis.IntCmd, n)
	_, err := f.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := 0; i < n; i++ {
			metas[i] = p.HGetAll(ctx, f.meta(i))
			flights[i] = p.HGetAll(ctx, f.base(i)+"f")
			members[i] = p.ZCard(ctx, f.base(i)+"m")
		}
		return nil
	})
	f.seen(err)
	if err != nil {
		if isProtocol(err) {
			err = fmt.Errorf("%w: %w", ErrNotRedis, err)
		}
		return FleetStats{}, fmt.Errorf("redisstore: reading the fleet's counts: %w", err)
	}
	st := FleetStats{InFlightByHost: map[string]int64{}}
	num := func(m map[string]string, k string) int64 {
		v, _ := strconv.ParseInt(m[k], 10, 64)
		return v
	}
	for i := 0; i < n; i++ {
		m := metas[i].Val()
		if st.Epoch == "" {
			st.Epoch = m["epoch"]
		}
		st.Queued += num(m, "pending")
		st.Added += num(m, "added")
		st.Duplicates += num(m, "duplicates")
		st.Refused += num(m, "refused")
		st.Fetched += num(m, outFetched)
		st.Blocked += num(m, outBlocked)
		st.GaveUp += num(m, outGaveUp)
		st.Dropped += num(m, outRefused)
		st.Deferred += num(m, "deferred")
		st.Returned += num(m, "returned")
		for h, v := range flights[i].Val() {
			k, _ := strconv.ParseInt(v, 10, 64)
			st.InFlight += k
			st.InFlightByHost[h] += k
		}
		st.Members = max(st.Members, members[i].Val())
	}
	return st, nil
}
