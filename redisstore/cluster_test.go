package redisstore

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/robotsmw/robotsmw/internal/redistest"
)

// A backend is a Redis the fleet tests run on: one server, or a Redis
// Cluster of three masters.
type backend struct {
	name string
	// start starts it for t and returns a maker of clients.
	start func(t *testing.T) func() redis.UniversalClient
}

func backends() []backend {
	return []backend{
		{"single", func(t *testing.T) func() redis.UniversalClient {
			srv := redistest.Start(t)
			return func() redis.UniversalClient { return srv.Client() }
		}},
		{"cluster", func(t *testing.T) func() redis.UniversalClient {
			c := redistest.StartCluster(t)
			return func() redis.UniversalClient { return c.Client() }
		}},
	}
}

// TestClusterKeys checks that a crawl's frontier spreads over the masters
// of a cluster (every shard in a slot of its own, not one slot for the
// whole crawl), and that each member's view of it is whole: every
// request queued once, popped once, counted once.
func TestClusterKeys(t *testing.T) {
	c := redistest.StartCluster(t)
	ctx := context.Background()
	a, b := New(c.Client()), New(c.Client())
	defer a.Close()
	defer b.Close()
	const hosts = 64
	for i := range hosts {
		for _, f := range []*Fleet{a, b} { // each URL twice
			if err := f.Queue().AddRequest(serial(t, "http://h"+strconv.Itoa(i)+".test/")); err != nil {
				t.Fatal(err)
			}
		}
	}
	st, err := a.Stats(ctx)
	if err != nil || st.Queued != hosts || st.Duplicates != hosts {
		t.Fatalf("Stats = %+v, %v; want %d queued and %d duplicates", st, err, hosts, hosts)
	}
	used := 0
	for _, addr := range c.Addrs {
		n, err := redis.NewClient(&redis.Options{Addr: addr}).DBSize(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			used++
		}
	}
	if used < 2 {
		t.Errorf("the crawl's keys are on %d of 3 masters, want them spread", used)
	}
	got := map[string]bool{}
	for {
		r, err := b.Queue().GetRequest()
		if err != nil {
			t.Fatal(err)
		}
		if r == nil {
			break
		}
		u := urlOf(t, r)
		if got[u] {
			t.Errorf("%s popped twice", u)
		}
		got[u] = true
	}
	if len(got) != hosts {
		t.Errorf("popped %d requests, want %d", len(got), hosts)
	}
	// A master restarted empty would lose its shards: flushing every
	// master stands for it.
	err = c.Client().ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		return m.FlushAll(ctx).Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.front.step(ctx); !errors.Is(err, ErrCrawlLost) {
		t.Errorf("step after the cluster was flushed = %v, want ErrCrawlLost", err)
	}
}
