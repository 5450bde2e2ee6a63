package redisstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/redis/go-redis/v9"

	"github.com/robotsmw/robotsmw/internal/redistest"
)

// redisClient returns a client of addr that tries each command once.
func redisClient(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
}

// runOnce runs f with a plain collector, for at most 20 s.
func runOnce(t *testing.T, f *Fleet) error {
	q, c := newRun(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return f.Run(ctx, q, c)
}

// popped pops from f's shard 0, with no gap between a host's requests.
func popOne(t *testing.T, f *Fleet) string {
	t.Helper()
	p, err := f.front.pop(context.Background(), 0, 0)
	if err != nil {
		t.Fatalf("pop: %v", err)
	}
	return p.entry
}

// TestDeadMemberRequestsReturn checks that the requests of a member that
// stopped renewing go back to the front of their host's queue once its
// deadline passed, while the queue is busy, and that the member learns
// it and sends none of them.
func TestDeadMemberRequestsReturn(t *testing.T) {
	srv := redistest.Start(t)
	// Long enough that a loaded machine does not let a's lease lapse
	// before b's first pop.
	const ttl = 2 * time.Second
	a, b := testFleet(t, srv), testFleet(t, srv)
	a.ttl, b.ttl = ttl, ttl
	for i := range 6 {
		if err := a.Queue().AddRequest(serial(t, "http://x.test/"+string(rune('0'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	held := []string{popOne(t, a), popOne(t, a)}
	if held[0] != "x.test\n1h1 /0" || held[1] != "x.test\n1h1 /1" {
		t.Fatalf("a popped %q, want /0 and /1", held)
	}
	a.front.hold(held[0], 0, 1)
	// While a's deadline holds, b gets the next requests.
	if got := popOne(t, b); got != "x.test\n1h1 /2" {
		t.Errorf("b's pop while a is live = %q, want /2", got)
	}
	st, _ := b.Stats(context.Background())
	if st.InFlight != 3 || st.InFlightByHost["x.test"] != 3 {
		t.Errorf("Stats while a and b hold = %+v, want 3 in flight on x.test", st)
	}
	// a stops renewing; b keeps popping (a busy queue): within a TTL of
	// a's last renewal, plus the gap between b's pops, a's requests come
	// back first.
	deadline := time.Now().Add(2*ttl + time.Second)
	var got []string
	for time.Now().Before(deadline) && len(got) < 2 {
		if _, err := b.front.step(context.Background()); err != nil { // b's heartbeat
			t.Fatal(err)
		}
		st, _ := b.Stats(context.Background())
		if st.Returned > 0 {
			got = append(got, popOne(t, b), popOne(t, b))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(got) != 2 || got[0] != held[1] && got[0] != held[0] || got[1] != held[0] && got[1] != held[1] || got[0] == got[1] {
		t.Fatalf("b's pops after a's deadline = %q, want a's %q first", got, held)
	}
	// a comes back: its renewal tells it that its requests are gone.
	if a.front.stale(held[0]) {
		t.Fatal("a's request stale before a renewed")
	}
	if _, err := a.front.step(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !a.front.stale(held[0]) {
		t.Error("a's request given to b is not stale after a renewed")
	}
}

// TestOutageTakesNothingBack checks that deadlines that passed while Redis
// was away do not count: after the outage, live members' requests stay
// theirs.
func TestOutageTakesNothingBack(t *testing.T) {
	srv := redistest.Start(t)
	const ttl = 500 * time.Millisecond
	a, b := testFleet(t, srv), testFleet(t, srv)
	a.ttl, b.ttl = ttl, ttl
	for _, u := range []string{"http://x.test/0", "http://x.test/1"} {
		if err := a.Queue().AddRequest(serial(t, u)); err != nil {
			t.Fatal(err)
		}
	}
	if got := popOne(t, a); got != "x.test\n1h1 /0" {
		t.Fatalf("a popped %q", got)
	}
	srv.Stop()
	time.Sleep(3 * ttl)
	srv.Restart()
	if got := popOne(t, b); got != "x.test\n1h1 /1" {
		t.Errorf("b's pop right after the outage = %q, want /1 (a's /0 stays a's)", got)
	}
}

// TestCrawlLost checks that a member whose crawl vanished from Redis (a
// restart without persistence) or was replaced stops with a
// *CrawlLostError, rather than going on as if nothing happened.
func TestCrawlLost(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	a := testFleet(t, srv)
	if err := a.Queue().AddRequest(serial(t, "http://x.test/0")); err != nil {
		t.Fatal(err)
	}
	if err := srv.Client().FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	var lost *CrawlLostError
	_, err := a.Queue().GetRequest()
	if !errors.As(err, &lost) || !errors.Is(err, ErrCrawlLost) || lost.Found != "" {
		t.Fatalf("GetRequest after FLUSHALL = %v, want a *CrawlLostError with nothing found", err)
	}
	if err := a.Queue().AddRequest(serial(t, "http://x.test/1")); !errors.Is(err, ErrCrawlLost) {
		t.Errorf("AddRequest after the crawl was lost = %v, want ErrCrawlLost", err)
	}
	if err := runOnce(t, a); !errors.Is(err, ErrCrawlLost) {
		t.Errorf("Run after the crawl was lost = %v, want ErrCrawlLost", err)
	}

	// Another member starts a new crawl under the prefix: a member of the
	// old one finds it changed.
	old := testFleet(t, srv)
	if _, err := old.Epoch(ctx); err != nil {
		t.Fatal(err)
	}
	if err := srv.Client().FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	fresh := testFleet(t, srv)
	if err := fresh.Queue().AddRequest(serial(t, "http://x.test/0")); err != nil {
		t.Fatal(err)
	}
	_, err = old.Queue().GetRequest()
	if !errors.As(err, &lost) || lost.Found == "" || lost.Found == lost.Joined {
		t.Errorf("GetRequest of the old crawl's member = %v, want a *CrawlLostError naming the new epoch", err)
	}
}

// TestRunCtxEndsRedisWait checks that Run's ctx interrupts a wait for
// Redis.
func TestRunCtxEndsRedisWait(t *testing.T) {
	srv := redistest.Start(t)
	f := testFleet(t, srv)
	d := newDownRecorder(f)
	if err := f.Queue().AddRequest(serial(t, "http://x.test/0")); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	q, c := newRun(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx, q, c) }()
	<-d.down
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run after its ctx ended while Redis was down = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run still waits for Redis 10 s after its ctx ended")
	}
	checkRunGone(t)
}

// TestFrontierKeysExpire checks that every key the frontier writes has a
// TTL: a crawl left alone is forgotten.
func TestFrontierKeysExpire(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	rdb := srv.Client()
	f := testFleet(t, srv)
	for _, u := range []string{"http://x.test/0", "http://x.test/1", "http://y.test/0"} {
		if err := f.Queue().AddRequest(serial(t, u)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.front.step(ctx); err != nil {
		t.Fatal(err)
	}
	if e := popOne(t, f); e == "" {
		t.Fatal("nothing popped")
	}
	keys, err := rdb.Keys(ctx, f.prefix()+":*").Result()
	if err != nil || len(keys) < 6 {
		t.Fatalf("KEYS = %v, %v; want the frontier's keys", keys, err)
	}
	for _, k := range keys {
		if ttl := rdb.PTTL(ctx, k).Val(); ttl <= 0 {
			t.Errorf("PTTL %s = %v, want a TTL", k, ttl)
		}
	}
}

// TestEndDoesNotWaitForRedis checks that a page's end, told from a colly
// callback, does not wait while Redis is down: it is kept, with the
// page's links, and sent by the next commit once Redis is back.
func TestEndDoesNotWaitForRedis(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	f := testFleet(t, srv)
	if err := f.Queue().AddRequest(serial(t, "http://x.test/0")); err != nil {
		t.Fatal(err)
	}
	b, err := f.Queue().GetRequest()
	if err != nil || b == nil {
		t.Fatalf("GetRequest = %q, %v", b, err)
	}
	r := &colly.Request{Ctx: colly.NewContext()}
	r.Ctx.Put(ctxLease, "x.test\n1h1 /0")
	srv.Stop()
	f.queue.running.Store(true) // links come from a page, as in a Run
	if err := f.Queue().AddRequest(serial(t, "http://x.test/1")); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		f.end(r, outFetched)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the end of a page waited for Redis")
	}
	srv.Restart()
	f.queue.running.Store(false)
	if err := f.front.commit(ctx, false); err != nil {
		t.Fatal(err)
	}
	st, err := f.Stats(ctx)
	if err != nil || st.Fetched != 1 || st.InFlight != 0 || st.Queued != 1 {
		t.Errorf("Stats after the outage = %+v, %v; want 1 fetched, 0 in flight, the link queued", st, err)
	}
}

// TestShardsMustMatch checks that a member whose Shards differs from the
// crawl's is refused, rather than reading another layout.
func TestShardsMustMatch(t *testing.T) {
	srv := redistest.Start(t)
	a, b := testFleet(t, srv), New(srv.Client())
	b.Shards = 4
	defer b.Close()
	if _, err := a.Epoch(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Epoch(context.Background()); err == nil || !strings.Contains(err.Error(), "Fleet.Shards must be the same") {
		t.Errorf("Epoch of a member with 4 shards in a 1-shard crawl = %v, want a refusal", err)
	}
}
