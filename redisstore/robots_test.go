package redisstore

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsmw/robotsmw/internal/redistest"
	"github.com/robotsmw/robotsmw/policy"
)

// A robotsClock is a fake clock for Fleet.Now and Cache.Now, safe for
// concurrent use. Redis's own clock (TTLs, the lease's expiry) is real.
type robotsClock struct {
	// mu guards t.
	mu sync.Mutex
	t  time.Time
}

func (c *robotsClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *robotsClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// A commandLog is a go-redis hook that records the name of every command
// a client sends, so that tests can count round trips.
type commandLog struct {
	// mu guards names.
	mu    sync.Mutex
	names []string
}

func (l *commandLog) add(cmds ...redis.Cmder) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range cmds {
		l.names = append(l.names, c.Name())
	}
}

// reset returns how many of the commands sent since the last reset are
// among names (all of them if names is empty), and forgets them.
func (l *commandLog) reset(names ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, got := range l.names {
		if len(names) == 0 {
			n++
			continue
		}
		for _, want := range names {
			if strings.EqualFold(got, want) {
				n++
			}
		}
	}
	l.names = nil
	return n
}

func (l *commandLog) DialHook(next redis.DialHook) redis.DialHook { return next }

func (l *commandLog) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		l.add(cmd)
		return next(ctx, cmd)
	}
}

func (l *commandLog) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		l.add(cmds...)
		return next(ctx, cmds)
	}
}

// robotsMember returns a fleet member over a client of its own, whose
// commands log records; set, if not nil, sets its fields before first use.
func robotsMember(t *testing.T, srv *redistest.Server, set func(f *Fleet)) (*Fleet, *commandLog, *redis.Client) {
	t.Helper()
	c := srv.Client()
	log := new(commandLog)
	c.AddHook(log)
	f := New(c)
	if set != nil {
		set(f)
	}
	f.init()
	t.Cleanup(func() { f.Close() })
	return f, log, c
}

const robotsBody = "User-agent: *\nDisallow: /private\n"

// parsedRecord returns the record of a robots.txt fetched at now that
// expires after ttl.
func parsedRecord(now time.Time, ttl time.Duration) policy.Record {
	return policy.Record{
		State: policy.StateParsed, StatusCode: 200,
		FetchedAt: now, Expires: now.Add(ttl),
		GoodState: policy.StateParsed, Body: []byte(robotsBody),
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestRobotsFleetFetchesOnce: two members, each with its own Cache and
// Redis client, look the same origin up from many goroutines at once; the
// lease lets one of them fetch robots.txt, once, while the other waits for
// its record.
func TestRobotsFleetFetchesOnce(t *testing.T) {
	srv := redistest.Start(t)
	var hits atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		hits.Add(1)
		time.Sleep(200 * time.Millisecond) // the other member must wait on the lease
		w.Write([]byte(robotsBody))
	}))
	defer ts.Close()

	var caches []*policy.Cache
	for range 2 {
		f, _, _ := robotsMember(t, srv, nil)
		caches = append(caches, &policy.Cache{Store: f.Robots(), Client: ts.Client()})
	}
	private := mustURL(t, ts.URL+"/private/page")
	var wg sync.WaitGroup
	for i := range 40 {
		c := caches[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := c.Get(context.Background(), private)
			if err != nil {
				t.Errorf("Cache.Get(%s) error: %v", private, err)
				return
			}
			if e.State != policy.StateParsed || e.Robots.Allowed("bot", private) {
				t.Errorf("Cache.Get(%s) = state %v, Allowed %v; want parsed, disallowed", private, e.State, e.Robots.Allowed("bot", private))
			}
		}()
	}
	wg.Wait()
	if n := hits.Load(); n != 1 {
		t.Errorf("robots.txt fetched %d times by a fleet of 2 members, want 1", n)
	}
}

// TestRobotsLoadFresh: a record that has not expired costs no round trip,
// whether this member saved it or read it from Redis once; an expired one
// is read again.
func TestRobotsLoadFresh(t *testing.T) {
	srv := redistest.Start(t)
	clock := &robotsClock{t: recordT0}
	a, logA, _ := robotsMember(t, srv, func(f *Fleet) { f.Now = clock.Now })
	b, logB, _ := robotsMember(t, srv, func(f *Fleet) { f.Now = clock.Now })
	ctx := context.Background()
	const origin = "https://example.com"
	private := mustURL(t, origin+"/private/x")

	if err := a.Robots().Save(ctx, origin, parsedRecord(clock.Now(), time.Hour)); err != nil {
		t.Fatalf("Save: %v", err)
	}
	if n := logA.reset("set"); n != 1 {
		t.Errorf("Save sent %d SETs, want 1", n)
	}
	load := func(f *Fleet, what string) policy.Record {
		t.Helper()
		rec, ok, err := f.Robots().Load(ctx, origin)
		if err != nil || !ok {
			t.Fatalf("%s: Load(%q) = ok %v, error %v; want a record", what, origin, ok, err)
		}
		if rec.Robots == nil || rec.Robots.Allowed("bot", private) {
			t.Fatalf("%s: Load(%q).Robots = %v, want the parsed body", what, origin, rec.Robots)
		}
		return rec
	}
	for range 1000 {
		load(a, "member that saved")
	}
	if n := logA.reset(); n != 0 {
		t.Errorf("1000 Loads of a fresh record saved here sent %d commands, want 0", n)
	}

	load(b, "other member, first Load")
	if n := logB.reset("get"); n != 1 {
		t.Errorf("first Load by another member sent %d GETs, want 1", n)
	}
	cache := &policy.Cache{Store: b.Robots(), Now: clock.Now}
	for range 1000 {
		load(b, "other member")
		if e, ok := cache.Peek(private); !ok || e.Robots.Allowed("bot", private) {
			t.Fatalf("Cache.Peek(%s) = %v, %v; want the parsed record", private, e, ok)
		}
	}
	if n := logB.reset(); n != 0 {
		t.Errorf("2000 Loads of a fresh record read once sent %d commands, want 0", n)
	}

	clock.Add(time.Hour)
	load(b, "expired")
	if n := logB.reset("get"); n != 1 {
		t.Errorf("Load of an expired record sent %d GETs, want 1", n)
	}
}

// TestRobotsSaveTTL: every record has a TTL, past its expiry, and past 30
// days of failures while unreachable (RFC 9309 §2.3.1.4).
func TestRobotsSaveTTL(t *testing.T) {
	srv := redistest.Start(t)
	clock := &robotsClock{t: recordT0}
	f, _, c := robotsMember(t, srv, func(f *Fleet) { f.Now = clock.Now })
	ctx := context.Background()
	now := clock.Now()
	unreachable := policy.Record{
		State: policy.StateUnreachable, StatusCode: 503,
		FetchedAt: now, Expires: now.Add(time.Minute), RetryAt: now.Add(time.Minute),
		Failures: 3, FailingSince: now.Add(-24 * time.Hour),
		GoodState: policy.StateParsed, Body: []byte(robotsBody),
		Err: &policy.FetchError{URL: "https://b.example/robots.txt", StatusCode: 503},
	}
	expired := parsedRecord(now.Add(-48*time.Hour), 24*time.Hour)
	tests := []struct {
		origin   string
		rec      policy.Record
		min, max time.Duration // PTTL bounds; Redis's clock runs meanwhile
	}{
		{"https://a.example", parsedRecord(now, time.Hour), recordGrace, recordGrace + time.Hour},
		{"https://b.example", unreachable, failingGrace - 25*time.Hour, failingGrace - 24*time.Hour},
		{"https://c.example", expired, recordGrace - time.Minute, recordGrace},
	}
	for _, tt := range tests {
		if err := f.Robots().Save(ctx, tt.origin, tt.rec); err != nil {
			t.Fatalf("Save(%q): %v", tt.origin, err)
		}
		key := f.key("robots", tag(tt.origin))
		ttl, err := c.PTTL(ctx, key).Result()
		if err != nil || ttl < tt.min || ttl > tt.max {
			t.Errorf("PTTL %s after Save(%q, %v record) = %v, %v; want in [%v, %v]", key, tt.origin, tt.rec.State, ttl, err, tt.min, tt.max)
		}
	}

	// The lease expires too.
	_, _, release, err := f.Robots().(policy.Leaser).Lease(ctx, "https://d.example")
	if err != nil || release == nil {
		t.Fatalf("Lease = release %v, error %v; want the lease", release != nil, err)
	}
	lock := f.key("robots", tag("https://d.example"), "lock")
	if ttl, err := c.PTTL(ctx, lock).Result(); err != nil || ttl <= 0 || ttl > defaultLeaseWait {
		t.Errorf("PTTL %s = %v, %v; want in (0, %v]", lock, ttl, err, defaultLeaseWait)
	}
	release()
	if n, err := c.Exists(ctx, lock).Result(); err != nil || n != 0 {
		t.Errorf("EXISTS %s after release = %d, %v; want 0", lock, n, err)
	}
}

// TestRobotsSaveParses: a record saved without Robots is parsed once, and
// Load returns it parsed; Robots is not written to Redis.
func TestRobotsSaveParses(t *testing.T) {
	srv := redistest.Start(t)
	f, _, _ := robotsMember(t, srv, nil)
	ctx := context.Background()
	now := time.Now()
	const origin = "https://example.com"
	if err := f.Robots().Save(ctx, origin, parsedRecord(now, time.Hour)); err != nil {
		t.Fatal(err)
	}
	rec, ok, err := f.Robots().Load(ctx, origin)
	if err != nil || !ok || rec.Robots == nil {
		t.Fatalf("Load(%q) = Robots %v, ok %v, error %v; want the body parsed", origin, rec.Robots, ok, err)
	}
	if d := recordDiff(rec, parsedRecord(now, time.Hour)); d != "" {
		t.Errorf("Load(%q) after Save: %s", origin, d)
	}
}

// TestRobotsLoadMissing: an unknown origin and a damaged record are not
// found; a record Redis has lost, or holds older than the one kept here,
// is the one kept here.
func TestRobotsLoadMissing(t *testing.T) {
	srv := redistest.Start(t)
	clock := &robotsClock{t: recordT0}
	f, _, c := robotsMember(t, srv, func(f *Fleet) { f.Now = clock.Now })
	ctx := context.Background()
	s := f.Robots()

	if _, ok, err := s.Load(ctx, "https://unknown.example"); ok || err != nil {
		t.Errorf("Load(unknown origin) = ok %v, error %v; want not found", ok, err)
	}

	damaged := "https://damaged.example"
	for _, b := range []string{"", "garbage", "\x01\x01\x01\x00", "\x02\x01\x01\x00\x00\x00\x00\x00"} {
		if err := c.Set(ctx, f.key("robots", tag(damaged)), b, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := s.Load(ctx, damaged); ok || err != nil {
			t.Errorf("Load of the damaged record %q = ok %v, error %v; want not found", b, ok, err)
		}
	}

	lost := "https://lost.example"
	if err := s.Save(ctx, lost, parsedRecord(clock.Now(), time.Minute)); err != nil {
		t.Fatal(err)
	}
	c.Del(ctx, f.key("robots", tag(lost)))
	clock.Add(time.Hour)
	if rec, ok, err := s.Load(ctx, lost); !ok || err != nil || !rec.FetchedAt.Equal(recordT0) {
		t.Errorf("Load of an expired record Redis lost = %v, ok %v, error %v; want the one kept here", rec.FetchedAt, ok, err)
	}

	older := "https://older.example"
	if err := s.Save(ctx, older, parsedRecord(clock.Now().Add(-time.Hour), time.Minute)); err != nil {
		t.Fatal(err)
	}
	newer := parsedRecord(clock.Now(), time.Minute)
	newer.Body = []byte("User-agent: *\nDisallow: /\n")
	f.robots.local.put(older, newer) // as after a Save that did not reach Redis
	clock.Add(time.Hour)
	if rec, ok, err := s.Load(ctx, older); !ok || err != nil || string(rec.Body) != string(newer.Body) {
		t.Errorf("Load when Redis holds an older record = %q, ok %v, error %v; want the newer one kept here", rec.Body, ok, err)
	}
}

// TestRobotsMaxLocal: at most MaxLocal records are kept in memory; one
// forgotten is read from Redis again.
func TestRobotsMaxLocal(t *testing.T) {
	srv := redistest.Start(t)
	clock := &robotsClock{t: recordT0}
	f, log, _ := robotsMember(t, srv, func(f *Fleet) { f.Now = clock.Now; f.MaxLocal = 2 })
	ctx := context.Background()
	origins := []string{"https://a.example", "https://b.example", "https://c.example"}
	for _, o := range origins {
		if err := f.Robots().Save(ctx, o, parsedRecord(clock.Now(), time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.robots.local.len(); n != 2 {
		t.Errorf("records kept with MaxLocal 2 = %d, want 2", n)
	}
	log.reset()
	if _, ok, err := f.Robots().Load(ctx, origins[0]); !ok || err != nil {
		t.Fatalf("Load(%q) = %v, %v; want the record from Redis", origins[0], ok, err)
	}
	if n := log.reset("get"); n != 1 {
		t.Errorf("Load of a record no longer kept sent %d GETs, want 1", n)
	}
}

// TestRobotsLease covers the lease's cases, each with its own origin.
func TestRobotsLease(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	other := "someone else"

	t.Run("release only ours", func(t *testing.T) {
		f, _, c := robotsMember(t, srv, nil)
		const origin = "https://release.example"
		lock := f.key("robots", tag(origin), "lock")
		_, _, release, err := f.Robots().(policy.Leaser).Lease(ctx, origin)
		if err != nil || release == nil {
			t.Fatalf("Lease = %v; want the lease", err)
		}
		// Our lease expired and another member took it.
		c.Set(ctx, lock, other, time.Hour)
		release()
		if v, err := c.Get(ctx, lock).Result(); v != other {
			t.Errorf("GET %s after release of an expired lease = %q, %v; want the new holder's %q", lock, v, err, other)
		}
	})

	t.Run("give up", func(t *testing.T) {
		f, _, c := robotsMember(t, srv, func(f *Fleet) { f.LeaseWait = 300 * time.Millisecond })
		const origin = "https://slow.example"
		c.Set(ctx, f.key("robots", tag(origin), "lock"), other, time.Hour)
		rec, fresh, release, err := f.Robots().(policy.Leaser).Lease(ctx, origin)
		if err == nil || release != nil || fresh || !strings.Contains(err.Error(), "waited") || !strings.Contains(err.Error(), origin) {
			t.Errorf("Lease while another member holds it = %v, fresh %v, release %v, error %v; want it to give up", rec.State, fresh, release != nil, err)
		}
	})

	t.Run("holder died", func(t *testing.T) {
		f, _, c := robotsMember(t, srv, func(f *Fleet) { f.LeaseWait = 10 * time.Second })
		const origin = "https://died.example"
		lock := f.key("robots", tag(origin), "lock")
		c.Set(ctx, lock, other, 300*time.Millisecond)
		_, fresh, release, err := f.Robots().(policy.Leaser).Lease(ctx, origin)
		if err != nil || release == nil || fresh {
			t.Fatalf("Lease after the holder's lease expired = fresh %v, release %v, error %v; want the lease", fresh, release != nil, err)
		}
		if v, _ := c.Get(ctx, lock).Result(); v == other || v == "" {
			t.Errorf("GET %s = %q, want our token", lock, v)
		}
		release()
	})

	t.Run("already saved", func(t *testing.T) {
		f, _, c := robotsMember(t, srv, nil)
		const origin = "https://saved.example"
		if err := f.Robots().Save(ctx, origin, parsedRecord(time.Now(), time.Hour)); err != nil {
			t.Fatal(err)
		}
		g, _, _ := robotsMember(t, srv, nil)
		rec, fresh, release, err := g.Robots().(policy.Leaser).Lease(ctx, origin)
		if err != nil || release != nil || !fresh || rec.Robots == nil {
			t.Errorf("Lease of a fresh record = Robots %v, fresh %v, release %v, error %v; want the record", rec.Robots, fresh, release != nil, err)
		}
		if n, _ := c.Exists(ctx, f.key("robots", tag(origin), "lock")).Result(); n != 0 {
			t.Errorf("lease of %s held after Lease found a fresh record", origin)
		}
	})

	t.Run("wait for holder", func(t *testing.T) {
		clock := &robotsClock{t: time.Now()}
		holder, _, _ := robotsMember(t, srv, func(f *Fleet) { f.Now = clock.Now })
		waiter, log, _ := robotsMember(t, srv, func(f *Fleet) { f.Now = clock.Now })
		const origin = "https://wait.example"
		_, _, release, err := holder.Robots().(policy.Leaser).Lease(ctx, origin)
		if err != nil || release == nil {
			t.Fatalf("holder's Lease = %v; want the lease", err)
		}
		type result struct {
			rec     policy.Record
			fresh   bool
			release func()
			err     error
		}
		done := make(chan result)
		go func() {
			var r result
			r.rec, r.fresh, r.release, r.err = waiter.Robots().(policy.Leaser).Lease(ctx, origin)
			done <- r
		}()
		time.Sleep(100 * time.Millisecond) // let the waiter poll; the result does not depend on it
		if err := holder.Robots().Save(ctx, origin, parsedRecord(clock.Now(), time.Hour)); err != nil {
			t.Fatal(err)
		}
		release()
		r := <-done
		if r.err != nil || r.release != nil || !r.fresh || r.rec.Robots == nil {
			t.Fatalf("waiter's Lease = Robots %v, fresh %v, release %v, error %v; want the holder's record", r.rec.Robots, r.fresh, r.release != nil, r.err)
		}
		log.reset()
		if _, ok, err := waiter.Robots().Load(ctx, origin); !ok || err != nil {
			t.Errorf("waiter's Load after Lease = %v, %v; want the record", ok, err)
		}
		if n := log.reset(); n != 0 {
			t.Errorf("waiter's Load after Lease sent %d commands, want 0: the record is kept", n)
		}
	})
}

// TestRobotsRedisDown: while Redis is down a record kept in memory is
// served, even expired; an unknown origin is an error, which the Cache
// reports as policy.ErrStore; Save keeps the record here; Lease fails at
// once. Once Redis is back everything works again.
func TestRobotsRedisDown(t *testing.T) {
	srv := redistest.Start(t)
	clock := &robotsClock{t: time.Now()}
	// mu guards downs.
	var mu sync.Mutex
	var downs []error
	f, _, _ := robotsMember(t, srv, func(f *Fleet) {
		f.Now = clock.Now
		f.OnDown = func(err error) {
			mu.Lock()
			defer mu.Unlock()
			downs = append(downs, err)
		}
	})
	s := f.Robots()
	ctx := context.Background()
	const known, unknown, later = "https://known.example", "https://unknown.example", "https://later.example"
	if err := s.Save(ctx, known, parsedRecord(clock.Now(), time.Hour)); err != nil {
		t.Fatal(err)
	}
	clock.Add(2 * time.Hour) // the record kept here has expired

	srv.Stop()
	if rec, ok, err := s.Load(ctx, known); !ok || err != nil || rec.Robots == nil {
		t.Errorf("Load(known origin) while Redis is down = Robots %v, ok %v, error %v; want the expired record kept here", rec.Robots, ok, err)
	}
	if _, ok, err := s.Load(ctx, unknown); ok || err == nil || !isDown(errors.Unwrap(err)) {
		t.Errorf("Load(unknown origin) while Redis is down = ok %v, error %v; want Redis's error", ok, err)
	}
	cache := &policy.Cache{Store: s, Now: clock.Now}
	if _, err := cache.Get(ctx, mustURL(t, unknown+"/")); !errors.Is(err, policy.ErrStore) {
		t.Errorf("Cache.Get(unknown origin) while Redis is down: error %v, want one wrapping policy.ErrStore", err)
	}
	if err := s.Save(ctx, later, parsedRecord(clock.Now(), time.Hour)); err == nil {
		t.Errorf("Save while Redis is down = nil, want an error")
	}
	if _, ok, err := s.Load(ctx, later); !ok || err != nil {
		t.Errorf("Load after a Save that failed = ok %v, error %v; want the record kept here", ok, err)
	}
	if _, _, release, err := s.(policy.Leaser).Lease(ctx, unknown); err == nil || release != nil {
		t.Errorf("Lease while Redis is down = release %v, error %v; want an error", release != nil, err)
	}
	mu.Lock()
	if len(downs) != 1 || downs[0] == nil {
		t.Errorf("OnDown calls while Redis is down = %v, want one with an error", downs)
	}
	mu.Unlock()

	srv.Restart()
	// The client reconnects on its own; wait for it, without a time bound
	// of ours (the test's timeout applies).
	for s.Save(ctx, unknown, parsedRecord(clock.Now(), time.Hour)) != nil {
		time.Sleep(50 * time.Millisecond)
	}
	g, _, _ := robotsMember(t, srv, func(f *Fleet) { f.Now = clock.Now })
	if rec, ok, err := g.Robots().Load(ctx, unknown); !ok || err != nil || rec.Robots == nil {
		t.Errorf("another member's Load after Redis restarted = Robots %v, ok %v, error %v; want the record", rec.Robots, ok, err)
	}
	if _, ok, err := s.Load(ctx, known); !ok || err != nil {
		t.Errorf("Load(known origin) after Redis restarted empty = ok %v, error %v; want the record kept here", ok, err)
	}
	mu.Lock()
	if len(downs) != 2 || downs[1] != nil {
		t.Errorf("OnDown calls = %v, want an error, then nil once Redis answers", downs)
	}
	mu.Unlock()
}
