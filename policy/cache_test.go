package policy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a clock that moves only when told to.
type fakeClock struct {
	mu sync.Mutex // guards t
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set moves the clock to t.
func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// robotsServer starts a loopback server whose /robots.txt requests are
// counted and answered by h.
func robotsServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			n.Add(1)
		}
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// serve returns a handler that answers with status, header and body.
func serve(status int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

// newCache returns a Cache on clock whose fetches are waited for when the
// test ends, so that none outlives it (an idle fetch goroutine ends on its
// own within fetcherIdle).
func newCache(t *testing.T, clock *fakeClock) *Cache {
	t.Helper()
	c := &Cache{Now: clock.Now, UserAgent: "TestBot/1.0"}
	t.Cleanup(c.running.Wait)
	return c
}

func urlOf(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

const testRules = "User-agent: *\nDisallow: /private\n"

// allowed reports Robots.Allowed for TestBot and path.
func allowed(t *testing.T, e Entry, path string) bool {
	t.Helper()
	if e.Robots == nil {
		t.Fatalf("Entry for %s has nil Robots", e.Origin)
	}
	return e.Robots.Allowed("TestBot", urlOf(t, path))
}

// dialTo returns a client that connects to addr whatever the URL's host,
// so that tests can use several host names without DNS.
func dialTo(t *testing.T, addr string) *http.Client {
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func TestCacheZeroValue(t *testing.T) {
	srv, _ := robotsServer(t, serve(200, testRules))
	var c Cache
	defer c.running.Wait()
	e, err := c.Get(context.Background(), urlOf(t, srv.URL+"/x"))
	if err != nil {
		t.Fatalf("Get = %v", err)
	}
	if e.State != StateParsed || allowed(t, e, "/private") || !allowed(t, e, "/public") {
		t.Errorf("Get = state %v, /private %v, /public %v; want parsed, false, true",
			e.State, allowed(t, e, "/private"), allowed(t, e, "/public"))
	}
	if got := e.Expires.Sub(e.FetchedAt); got != 24*time.Hour {
		t.Errorf("Expires - FetchedAt = %v, want 24h", got)
	}
}

// TestCacheMaxAge: RFC 9309 §2.4, docs/robots-semantics.md#caching:
// Cache-Control max-age shortens or lengthens the 24 h lifetime, within [1h,
// 24h] (or TTL).
func TestCacheMaxAge(t *testing.T) {
	tests := []struct {
		name         string
		ttl          time.Duration
		cacheControl string
		status       int
		want         time.Duration
	}{
		{"none", 0, "", 200, 24 * time.Hour},
		{"shorter", 0, "public, max-age=7200", 200, 2 * time.Hour},
		{"short clamped", 0, "max-age=60", 200, time.Hour},
		{"long clamped", 0, "max-age=172800", 200, 24 * time.Hour},
		{"longer than TTL", 6 * time.Hour, "max-age=43200", 200, 12 * time.Hour},
		{"TTL over 24h", 48 * time.Hour, "max-age=172800", 200, 48 * time.Hour},
		{"no-store", 0, "no-store", 200, time.Hour},
		{"max-age=0", 0, "max-age=0", 200, time.Hour},
		{"no-cache quoted", 0, `no-cache, max-age="600"`, 200, time.Hour},
		{"two max-age", 0, "max-age=10800, max-age=7200", 200, 2 * time.Hour},
		{"bad max-age", 0, "max-age=soon", 200, 24 * time.Hour},
		{"404 shorter", 0, "max-age=7200", 404, 2 * time.Hour},
		{"TTL", 3 * time.Hour, "", 200, 3 * time.Hour},
		{"TTL below floor", 10 * time.Minute, "max-age=0", 200, 10 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, n := robotsServer(t, serve(tt.status, testRules, "Cache-Control", tt.cacheControl))
			clock := newFakeClock()
			c := newCache(t, clock)
			c.TTL = tt.ttl
			u := urlOf(t, srv.URL+"/")
			e, err := c.Get(context.Background(), u)
			if err != nil {
				t.Fatalf("Get = %v", err)
			}
			if got := e.Expires.Sub(e.FetchedAt); got != tt.want {
				t.Errorf("Cache-Control %q: Expires - FetchedAt = %v, want %v", tt.cacheControl, got, tt.want)
			}
			// Just before expiry the copy is used; at expiry it is refreshed.
			clock.Advance(tt.want - time.Second)
			c.Get(context.Background(), u)
			c.running.Wait()
			if n.Load() != 1 {
				t.Errorf("fetches before expiry = %d, want 1", n.Load())
			}
			clock.Advance(time.Second)
			c.Get(context.Background(), u)
			c.running.Wait()
			if n.Load() != 2 {
				t.Errorf("fetches at expiry = %d, want 2", n.Load())
			}
		})
	}
}

// TestCacheStaleWhileRefresh: an expired policy is served while exactly one
// refresh runs in the background.
func TestCacheStaleWhileRefresh(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int64
	srv, n := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			fmt.Fprint(w, "User-agent: *\nDisallow: /v1\n")
			return
		}
		<-release
		fmt.Fprint(w, "User-agent: *\nDisallow: /v2\n")
	})
	clock := newFakeClock()
	c := newCache(t, clock)
	u := urlOf(t, srv.URL+"/")
	if _, err := c.Get(context.Background(), u); err != nil {
		t.Fatalf("Get = %v", err)
	}
	clock.Advance(25 * time.Hour)

	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The refresh is blocked on release, so these return only
			// if they do not wait for it.
			e, err := c.Get(context.Background(), u)
			if err != nil || allowed(t, e, "/v1") || !allowed(t, e, "/v2") {
				t.Errorf("Get during refresh = %v, /v1 allowed %v; want the old copy", err, allowed(t, e, "/v1"))
			}
		}()
	}
	wg.Wait()
	close(release)
	c.running.Wait() // the refresh goroutine ends
	if got := n.Load(); got != 2 {
		t.Errorf("robots.txt fetches = %d, want 2 (one refresh)", got)
	}
	e, err := c.Get(context.Background(), u)
	if err != nil || !allowed(t, e, "/v1") || allowed(t, e, "/v2") {
		t.Errorf("Get after refresh = %v, /v2 allowed %v; want the new copy", err, allowed(t, e, "/v2"))
	}
	if !e.FetchedAt.Equal(clock.Now()) || e.Stale {
		t.Errorf("Get after refresh: FetchedAt %v, Stale %v; want %v, false", e.FetchedAt, e.Stale, clock.Now())
	}
}

// TestCacheLastGoodCopy: docs/robots-semantics.md#unreachable: when a
// refresh fails, the last good copy stays in force, and robots.txt is
// retried on the back-off schedule.
func TestCacheLastGoodCopy(t *testing.T) {
	for _, good := range []struct {
		status      int
		privateOK   bool
		description string
	}{
		{200, false, "parsed"},
		{404, true, "unavailable"},
	} {
		t.Run(good.description, func(t *testing.T) {
			var fail atomic.Bool
			srv, n := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
				if fail.Load() {
					w.WriteHeader(503)
					return
				}
				w.WriteHeader(good.status)
				fmt.Fprint(w, testRules)
			})
			clock := newFakeClock()
			c := newCache(t, clock)
			u := urlOf(t, srv.URL+"/")
			c.Get(context.Background(), u)
			fail.Store(true)

			clock.Advance(25 * time.Hour)
			c.Get(context.Background(), u) // starts the refresh
			c.running.Wait()
			e, err := c.Get(context.Background(), u)
			var fe *FetchError
			if err != nil || e.State != StateUnreachable || !e.Stale || !errors.As(e.Err, &fe) || fe.StatusCode != 503 {
				t.Fatalf("Get after failed refresh = %v, state %v, stale %v, Err %v; want nil, unreachable, true, 503",
					err, e.State, e.Stale, e.Err)
			}
			if allowed(t, e, "/private") != good.privateOK || !allowed(t, e, "/public") {
				t.Errorf("Get after failed refresh: /private allowed %v, want %v (the last good copy)",
					allowed(t, e, "/private"), good.privateOK)
			}
			if got := e.RetryAt.Sub(clock.Now()); got != time.Minute || !e.Expires.Equal(e.RetryAt) {
				t.Errorf("RetryAt - now = %v, Expires %v; want 1m, RetryAt", got, e.Expires)
			}
			if e.Failures != 1 {
				t.Errorf("Get after failed refresh: Entry.Failures = %d, want 1", e.Failures)
			}

			// Failing on, 40 days later: still the last good copy.
			for range 2 {
				clock.Advance(20 * 24 * time.Hour)
				c.Get(context.Background(), u)
				c.running.Wait()
			}
			e, err = c.Get(context.Background(), u)
			if err != nil || !e.Stale || allowed(t, e, "/private") != good.privateOK || e.Failures != 3 {
				t.Errorf("Get after 40 days of failures = %v, stale %v, /private allowed %v, Failures %d; want nil, true, %v, 3",
					err, e.Stale, allowed(t, e, "/private"), e.Failures, good.privateOK)
			}

			// The site recovers.
			fail.Store(false)
			clock.Advance(time.Hour)
			c.Get(context.Background(), u)
			c.running.Wait()
			e, err = c.Get(context.Background(), u)
			if err != nil || e.Stale || e.State == StateUnreachable || e.Err != nil || e.Failures != 0 {
				t.Errorf("Get after recovery = %v, state %v, stale %v, Err %v, Failures %d; want nil, not unreachable, false, nil, 0",
					err, e.State, e.Stale, e.Err, e.Failures)
			}
			if got := n.Load(); got != 5 {
				t.Errorf("robots.txt fetches = %d, want 5", got)
			}
		})
	}
}

// TestCacheThirtyDays: RFC 9309 §2.3.1.4: unreachable for more than 30 days
// with no cached copy: allow all; until then, disallow all.
func TestCacheThirtyDays(t *testing.T) {
	srv, _ := robotsServer(t, serve(500, ""))
	clock := newFakeClock()
	c := newCache(t, clock)
	u := urlOf(t, srv.URL+"/")
	start := clock.Now()
	steps := []struct {
		at      time.Duration // since the first failure
		allowed bool
	}{
		{0, false},
		{29 * 24 * time.Hour, false},
		{30 * 24 * time.Hour, false},
		{30*24*time.Hour + time.Hour, true},
		{40 * 24 * time.Hour, true},
	}
	for _, s := range steps {
		clock.Set(start.Add(s.at))
		e, err := c.Get(context.Background(), u)
		c.running.Wait()
		if got := allowed(t, e, "/public"); got != s.allowed || (err == nil) != s.allowed {
			t.Errorf("after %v unreachable: Get = %v, /public allowed %v; want allowed %v", s.at, err, got, s.allowed)
		}
		if e.State != StateUnreachable || e.Stale || e.Err == nil {
			t.Errorf("after %v unreachable: state %v, stale %v, Err %v; want unreachable, false, non-nil",
				s.at, e.State, e.Stale, e.Err)
		}
	}
	// The allow is not cached: it is derived while the streak lasts, and the
	// site is still retried.
	e, _ := c.Peek(u)
	if !e.RetryAt.After(clock.Now()) {
		t.Errorf("RetryAt = %v, want after now %v", e.RetryAt, clock.Now())
	}
}

// TestCacheSingleFlight: any number of concurrent look-ups of a cold origin
// cause one fetch.
func TestCacheSingleFlight(t *testing.T) {
	release := make(chan struct{})
	srv, n := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		<-release
		fmt.Fprint(w, testRules)
	})
	c := newCache(t, newFakeClock())
	u := urlOf(t, srv.URL+"/x")
	const lookups = 1000
	var wg, started sync.WaitGroup
	started.Add(lookups)
	for range lookups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started.Done()
			e, err := c.Get(context.Background(), u)
			if err != nil || e.State != StateParsed {
				t.Errorf("Get = %v, state %v; want nil, parsed", err, e.State)
			}
		}()
	}
	started.Wait()
	close(release)
	wg.Wait()
	if got := n.Load(); got != 1 {
		t.Errorf("robots.txt fetches for %d concurrent look-ups = %d, want 1", lookups, got)
	}
}

// TestCacheWaiterGivesUp: a waiter whose context ends returns at once; the
// shared fetch goes on for the others.
func TestCacheWaiterGivesUp(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{})
	srv, n := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-release
		fmt.Fprint(w, testRules)
	})
	c := newCache(t, newFakeClock())
	u := urlOf(t, srv.URL+"/")

	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := c.Get(ctx, u)
		first <- err
	}()
	<-arrived
	second := make(chan Entry, 1)
	go func() {
		e, _ := c.Get(context.Background(), u)
		second <- e
	}()
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Errorf("Get with cancelled ctx = %v, want context.Canceled", err)
	}
	close(release)
	if e := <-second; e.State != StateParsed || allowed(t, e, "/private") {
		t.Errorf("other waiter's Get: state %v, /private allowed %v; want parsed, false", e.State, allowed(t, e, "/private"))
	}
	if got := n.Load(); got != 1 {
		t.Errorf("robots.txt fetches = %d, want 1", got)
	}

	// A look-up whose context has already ended starts no fetch.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	e, err := c.Get(ctx, urlOf(t, "http://127.0.0.1:1/"))
	if !errors.Is(err, context.Canceled) || allowed(t, e, "/public") {
		t.Errorf("Get with ended ctx = %v, /public allowed %v; want context.Canceled, false", err, allowed(t, e, "/public"))
	}
}

// TestCacheAbandonedFetch: a fetch its Client abandons (an error matching
// context.Canceled: the Cache's own context cannot be cancelled) is no
// answer of the site: its waiters get the error, nothing is stored or
// counted, and the next look-up fetches again.
func TestCacheAbandonedFetch(t *testing.T) {
	srv, n := robotsServer(t, serve(200, testRules))
	var abandon atomic.Bool
	abandon.Store(true)
	client := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		if abandon.Load() {
			return nil, fmt.Errorf("the crawl ended: %w", context.Canceled)
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	c := &Cache{Client: client}
	defer c.running.Wait()
	u := urlOf(t, srv.URL+"/x")
	e, err := c.Get(context.Background(), u)
	var fe *FetchError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &fe) || allowed(t, e, "/public") {
		t.Fatalf("Get with the fetch abandoned = %v, /public allowed %v; want a *FetchError matching context.Canceled, nothing allowed", err, allowed(t, e, "/public"))
	}
	if got, ok := c.Peek(u); ok {
		t.Errorf("Peek after an abandoned fetch = %+v, want nothing stored", got)
	}
	if st := c.Stats(); st != (FetchStats{}) {
		t.Errorf("Stats() after an abandoned fetch = %+v, want nothing counted", st)
	}
	abandon.Store(false)
	if e, err := c.Get(context.Background(), u); err != nil || e.State != StateParsed || allowed(t, e, "/private") {
		t.Errorf("Get after the abandoned fetch = %v, state %v; want it fetched again and parsed", err, e.State)
	}
	if got := n.Load(); got != 1 {
		t.Errorf("robots.txt requests at the server = %d, want 1", got)
	}
}

// roundTrip is an http.RoundTripper made of a function.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestCacheLRU: the default store keeps MaxEntries origins, forgetting the
// least recently used.
func TestCacheLRU(t *testing.T) {
	srv, n := robotsServer(t, serve(200, testRules))
	c := newCache(t, newFakeClock())
	c.Client = dialTo(t, srv.Listener.Addr().String())
	c.MaxEntries = 2
	get := func(host string) {
		t.Helper()
		if _, err := c.Get(context.Background(), urlOf(t, "http://"+host+"/")); err != nil {
			t.Fatalf("Get(%s) = %v", host, err)
		}
	}
	get("a.test")
	get("b.test")
	get("a.test") // a is now the most recently used
	get("c.test") // b goes
	for _, tt := range []struct {
		host string
		want bool
	}{{"a.test", true}, {"b.test", false}, {"c.test", true}} {
		if _, ok := c.Peek(urlOf(t, "http://"+tt.host+"/")); ok != tt.want {
			t.Errorf("Peek(%s) ok = %v, want %v", tt.host, ok, tt.want)
		}
	}
	if got := c.store.(*memStore).len(); got != 2 {
		t.Errorf("store holds %d records, want 2", got)
	}
	if got := n.Load(); got != 3 {
		t.Errorf("robots.txt fetches = %d, want 3", got)
	}
}

// TestCacheOriginsShareEntry: Google, file location: an IDN and its
// punycode, and a host with and without its default port, are one origin:
// one entry, one fetch.
func TestCacheOriginsShareEntry(t *testing.T) {
	var hosts sync.Map
	srv, n := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		hosts.Store(r.Host, true)
		fmt.Fprint(w, testRules)
	})
	c := newCache(t, newFakeClock())
	c.Client = dialTo(t, srv.Listener.Addr().String())
	urls := []string{
		"http://www.exämple.test/a",
		"http://www.xn--exmple-cua.test/b",
		"http://WWW.EXÄMPLE.TEST:80/c",
		"http://www.xn--exmple-cua.test.:80/d",
	}
	for _, s := range urls {
		e, err := c.Get(context.Background(), urlOf(t, s))
		if err != nil || e.Origin != "http://www.xn--exmple-cua.test" {
			t.Errorf("Get(%q) = %v, origin %q; want nil, http://www.xn--exmple-cua.test", s, err, e.Origin)
		}
	}
	if got := n.Load(); got != 1 {
		t.Errorf("robots.txt fetches = %d, want 1", got)
	}
	if _, ok := hosts.Load("www.xn--exmple-cua.test"); !ok {
		t.Errorf("robots.txt was not requested with Host www.xn--exmple-cua.test")
	}
	// http and https of one host are different origins.
	if _, ok := c.Peek(urlOf(t, "https://www.xn--exmple-cua.test/")); ok {
		t.Errorf("Peek(https://…) ok = true, want false")
	}
}

func TestCacheNoOrigin(t *testing.T) {
	c := newCache(t, newFakeClock())
	for _, s := range []string{"/relative", "ftp://example.com/x", "http:///x"} {
		e, err := c.Get(context.Background(), urlOf(t, s))
		if !errors.Is(err, ErrNoOrigin) || e.Robots == nil || allowed(t, e, "/x") {
			t.Errorf("Get(%q) = %v, want ErrNoOrigin and a disallow-all policy", s, err)
		}
		if _, ok := c.Peek(urlOf(t, s)); ok {
			t.Errorf("Peek(%q) ok = true, want false", s)
		}
	}
}

// brokenStore fails every Load.
type brokenStore struct{}

var errBroken = errors.New("broken store")

func (brokenStore) Load(context.Context, string) (Record, bool, error) {
	return Record{}, false, errBroken
}
func (brokenStore) Save(context.Context, string, Record) error { return errBroken }

func TestCacheStoreError(t *testing.T) {
	srv, n := robotsServer(t, serve(200, testRules))
	c := newCache(t, newFakeClock())
	c.Store = brokenStore{}
	e, err := c.Get(context.Background(), urlOf(t, srv.URL+"/"))
	if !errors.Is(err, errBroken) || allowed(t, e, "/public") {
		t.Errorf("Get with a broken store = %v, /public allowed %v; want errBroken, false", err, allowed(t, e, "/public"))
	}
	if n.Load() != 0 {
		t.Errorf("robots.txt fetches = %d, want 0", n.Load())
	}
}

// bodyStore keeps records the way a shared store would: serialised,
// without the compiled Robots.
type bodyStore struct {
	mu    sync.Mutex // guards m
	m     map[string]Record
	saves int
}

func (s *bodyStore) Load(_ context.Context, origin string) (Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.m[origin]
	r.Body = slices.Clone(r.Body)
	return r, ok, nil
}

func (s *bodyStore) Save(_ context.Context, origin string, r Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]Record)
	}
	r.Robots = nil
	r.Body = slices.Clone(r.Body)
	s.m[origin] = r
	s.saves++
	return nil
}

// TestCacheStoreWithoutRobots: a Store that keeps only the body works; the
// Cache parses it again.
func TestCacheStoreWithoutRobots(t *testing.T) {
	var fail atomic.Bool
	srv, n := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			w.WriteHeader(500)
			return
		}
		fmt.Fprint(w, testRules)
	})
	clock := newFakeClock()
	c := newCache(t, clock)
	s := &bodyStore{}
	c.Store = s
	u := urlOf(t, srv.URL+"/")
	for range 3 {
		e, err := c.Get(context.Background(), u)
		if err != nil || allowed(t, e, "/private") || !allowed(t, e, "/public") {
			t.Errorf("Get = %v, /private allowed %v; want nil, false", err, allowed(t, e, "/private"))
		}
	}
	fail.Store(true)
	clock.Advance(25 * time.Hour)
	c.Get(context.Background(), u)
	c.running.Wait()
	e, err := c.Get(context.Background(), u)
	if err != nil || !e.Stale || allowed(t, e, "/private") {
		t.Errorf("Get after failed refresh = %v, stale %v, /private allowed %v; want nil, true, false",
			err, e.Stale, allowed(t, e, "/private"))
	}
	if n.Load() != 2 || s.saves != 2 {
		t.Errorf("fetches %d, saves %d; want 2, 2", n.Load(), s.saves)
	}
}

// BenchmarkCachedPolicyMemory reports the heap held by one cached origin
// (record, LRU bookkeeping and compiled policy) for the median-size file of
// the corpus and on average over the corpus.
func BenchmarkCachedPolicyMemory(b *testing.B) {
	dir := corpusDir
	files, err := os.ReadDir(dir)
	if err != nil {
		b.Skipf("corpus not found: %v", err)
	}
	var bodies [][]byte
	for _, f := range files {
		if body, err := os.ReadFile(filepath.Join(dir, f.Name())); err == nil && !f.IsDir() {
			bodies = append(bodies, body)
		}
	}
	if len(bodies) == 0 {
		b.Skip("corpus is empty")
	}
	slices.SortFunc(bodies, func(x, y []byte) int { return len(x) - len(y) })
	median := bodies[len(bodies)/2]
	total := 0
	for _, body := range bodies {
		total += len(body)
	}
	for _, bm := range []struct {
		name   string
		bodies [][]byte
	}{
		{"median", [][]byte{median}},
		{"corpus", bodies},
	} {
		b.Run(bm.name, func(b *testing.B) {
			n := b.N * len(bm.bodies)
			keys := make([]string, n)
			for i := range keys {
				keys[i] = fmt.Sprintf("https://host%d.example", i)
			}
			s := newMemStore(n)
			ctx := context.Background()
			var m0, m1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			b.ResetTimer()
			for i := range n {
				body := bm.bodies[i%len(bm.bodies)]
				s.Save(ctx, keys[i], Record{State: StateParsed, StatusCode: 200,
					GoodState: StateParsed, Body: body, Robots: Parse(body)})
			}
			b.StopTimer()
			runtime.GC()
			runtime.ReadMemStats(&m1)
			b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/float64(n), "B/origin")
			sz := len(median)
			if bm.name == "corpus" {
				sz = total / len(bodies)
			}
			b.ReportMetric(float64(sz), "file-B")
			runtime.KeepAlive(s)
		})
	}
}

// fixedStore returns one record for every origin.
type fixedStore struct{ rec Record }

func (s fixedStore) Load(context.Context, string) (Record, bool, error) { return s.rec, true, nil }
func (fixedStore) Save(context.Context, string, Record) error           { return nil }

// TestCacheDamagedRecord: a record in a state the Cache never writes fails
// closed.
func TestCacheDamagedRecord(t *testing.T) {
	clock := newFakeClock()
	for _, rec := range []Record{
		{Expires: clock.Now().Add(time.Hour)},
		{State: StateParsed, Expires: clock.Now().Add(time.Hour)},
		{State: 9, GoodState: StateUnavailable, Expires: clock.Now().Add(time.Hour)},
	} {
		c := newCache(t, clock)
		c.Store = fixedStore{rec}
		e, err := c.Get(context.Background(), urlOf(t, "http://example.test/"))
		var fe *FetchError
		if !errors.As(err, &fe) || allowed(t, e, "/public") {
			t.Errorf("Get with record %+v = %v, /public allowed %v; want a *FetchError, false", rec, err, allowed(t, e, "/public"))
		}
	}
}

// BenchmarkCacheGet measures a look-up of a cached origin.
func BenchmarkCacheGet(b *testing.B) {
	srv := httptest.NewServer(serve(200, testRules))
	defer srv.Close()
	var c Cache
	u := urlOf(b, srv.URL+"/some/page?q=1")
	if _, err := c.Get(context.Background(), u); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		c.Get(context.Background(), u)
	}
}

// blockingServer starts a loopback server whose handler blocks until the
// returned release is called (or the request ends), and records the most
// requests it held at once. arrived receives one value per request.
func blockingServer(t *testing.T) (srv *httptest.Server, arrived <-chan string, release func(), peak *atomic.Int64) {
	t.Helper()
	gate := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	arrivals := make(chan string, 1000)
	var cur atomic.Int64
	peak = new(atomic.Int64)
	srv, _ = robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		n := cur.Add(1)
		defer cur.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		arrivals <- r.Host
		select {
		case <-gate:
		case <-r.Context().Done():
		}
		fmt.Fprint(w, testRules)
	})
	return srv, arrivals, release, peak
}

// queued returns the number of flights, queued or running.
func (c *Cache) queued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.flights)
}

// TestCacheMaxFetches: at most MaxFetches robots.txt fetches run at once;
// the others wait in a queue without a goroutine each, and all complete.
func TestCacheMaxFetches(t *testing.T) {
	srv, arrived, release, peak := blockingServer(t)
	c := newCache(t, newFakeClock())
	c.Client = dialTo(t, srv.Listener.Addr().String())
	c.MaxFetches = 2
	t.Cleanup(release) // before the fetch goroutines are waited for

	const origins = 20
	results := make(chan error, origins)
	get := func(i int) {
		u := urlOf(t, fmt.Sprintf("http://host%d.test/page", i))
		go func() {
			e, err := c.Get(context.Background(), u)
			if err == nil && e.State != StateParsed {
				err = fmt.Errorf("state %v", e.State)
			}
			results <- err
		}()
	}
	// Two look-ups take the two fetch slots.
	g0 := runtime.NumGoroutine()
	get(0)
	get(1)
	<-arrived
	<-arrived
	g1 := runtime.NumGoroutine()
	// 18 more wait in the queue.
	for i := 2; i < origins; i++ {
		get(i)
	}
	for c.queued() < origins {
		runtime.Gosched() // the look-ups are still starting their flights
	}
	g2 := runtime.NumGoroutine()
	// Each look-up is a goroutine of the test's own. Besides them the two
	// running flights add their fetch goroutines and what their
	// connections need (client read and write loops, server connection
	// and its background read); the queued flights add nothing.
	if grown := g2 - g1 - (origins - 2); grown > 2 {
		t.Errorf("goroutines grew by %d besides the %d look-ups as %d flights were queued, want about 0",
			grown, origins-2, origins-2)
	}
	if grown := g2 - g0 - origins; grown > 12 {
		t.Errorf("goroutines grew by %d besides the %d look-ups for 2 running and %d queued flights, want at most 12",
			grown, origins, origins-2)
	}
	if got := peak.Load(); got > 2 {
		t.Errorf("robots.txt requests in the handler at once = %d, want at most 2", got)
	}

	release()
	for i := range origins {
		if err := <-results; err != nil {
			t.Errorf("Get %d = %v, want nil", i+1, err)
		}
	}
	if got := peak.Load(); got > 2 {
		t.Errorf("robots.txt requests in the handler at once = %d, want at most 2", got)
	}
	c.running.Wait() // the fetch goroutines end once the queue is empty
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fetchers != 0 || len(c.queue) != 0 || len(c.flights) != 0 {
		t.Errorf("after all fetches: %d fetch goroutines, %d queued, %d flights; want 0, 0, 0", c.fetchers, len(c.queue), len(c.flights))
	}
}

// TestCacheMaxFetchesDefault: the documented default bound.
func TestCacheMaxFetchesDefault(t *testing.T) {
	var c Cache
	c.init()
	if want := min(64, max(8, 2*runtime.GOMAXPROCS(0))); c.maxFetches != want {
		t.Errorf("default MaxFetches = %d, want %d", c.maxFetches, want)
	}
}

// TestCacheQueuedTimeout: the Timeout of a fetch runs from its start, not
// while it waits in the queue; a look-up waiting for a queued fetch
// returns when its ctx ends, and the fetch still runs for the others. A
// fetch that stalls for a quarter of its Timeout gives its slot up to the
// queued one.
func TestCacheQueuedTimeout(t *testing.T) {
	srv, arrived, release, _ := blockingServer(t)
	clock := newFakeClock()
	c := newCache(t, clock)
	c.Client = dialTo(t, srv.Listener.Addr().String())
	c.MaxFetches = 1
	c.Timeout = 2 * time.Second // b.test keeps a quarter (500 ms) when a.test times out: room for a loaded machine
	t.Cleanup(release)

	// a.test takes the only slot; its fetch times out.
	first := make(chan error, 1)
	go func() {
		_, err := c.Get(context.Background(), urlOf(t, "http://a.test/"))
		first <- err
	}()
	<-arrived
	// b.test waits behind it; its look-up gives up.
	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan error, 1)
	go func() {
		_, err := c.Get(ctx, urlOf(t, "http://b.test/"))
		second <- err
	}()
	for c.queued() < 2 {
		runtime.Gosched()
	}
	c.mu.Lock()
	queued := c.flights["http://b.test"]
	c.mu.Unlock()
	cancel()
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Errorf("Get(b.test) with its ctx cancelled while queued = %v, want context.Canceled", err)
	}
	// a.test stalls: after a quarter of its Timeout b.test's fetch starts.
	select {
	case host := <-arrived:
		if host != "b.test" {
			t.Fatalf("second request for %s, want b.test", host)
		}
	case <-queued.done:
		t.Fatalf("b.test's fetch ended without a request: %v; want its Timeout to start when it leaves the queue", queued.rec.Err)
	}
	select {
	case err := <-first:
		t.Fatalf("Get(a.test) = %v before b.test's fetch started, want a.test to give its slot up while it stalls", err)
	default:
	}
	if err := <-first; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Get(a.test) = %v, want a timeout", err)
	}
	// b.test's fetch started a quarter of the Timeout after it was
	// queued; it still has that quarter when a.test's has run out.
	release()
	c.running.Wait()
	e, ok := c.Peek(urlOf(t, "http://b.test/"))
	if !ok || e.State != StateParsed || e.Err != nil {
		t.Errorf("Peek(b.test) = state %v, Err %v, ok %v; want parsed, nil, true", e.State, e.Err, ok)
	}
}

// TestCacheStalledOriginsGiveSlotsUp: origins whose robots.txt stalls
// cannot hold robots.txt up for every other origin: a healthy
// origin queued behind as many stalled fetches as there are slots is
// fetched while they still run.
func TestCacheStalledOriginsGiveSlotsUp(t *testing.T) {
	stalled := make(chan struct{})
	t.Cleanup(func() { close(stalled) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.Host, "hostile") {
			select {
			case <-stalled:
			case <-r.Context().Done():
			}
			return
		}
		w.Write([]byte("User-agent: *\nDisallow: /x\n"))
	}))
	t.Cleanup(srv.Close)
	c := newCache(t, newFakeClock())
	c.Client = dialTo(t, srv.Listener.Addr().String())
	c.MaxFetches = 4
	c.Timeout = 2 * time.Second
	hostile := make(chan error, 8)
	for i := range 8 {
		go func() {
			_, err := c.Get(context.Background(), urlOf(t, fmt.Sprintf("http://hostile%d.test/", i)))
			hostile <- err
		}()
	}
	for c.queued() < 8 {
		runtime.Gosched()
	}
	e, err := c.Get(context.Background(), urlOf(t, "http://healthy.test/"))
	if err != nil || e.State != StateParsed {
		t.Fatalf("Get(healthy.test) = state %v, %v; want parsed", e.State, err)
	}
	select {
	case err := <-hostile:
		t.Errorf("a stalled fetch ended (%v) before the healthy origin's; want the healthy one first", err)
	default:
	}
	for range 8 {
		if err := <-hostile; !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Get(hostile) = %v, want its Timeout", err)
		}
	}
	c.running.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fetchers != 0 || len(c.queue) != 0 || len(c.flights) != 0 {
		t.Errorf("after all fetches: %d fetch slots taken, %d queued, %d flights; want 0, 0, 0", c.fetchers, len(c.queue), len(c.flights))
	}
}

// A fetch goroutine that ran out of flights waits fetcherIdle for the next
// one: the fetch of a second origin soon after the first runs on the same
// goroutine, which ends once no flight came for fetcherIdle (here 200 ms).
func TestCacheFetcherReused(t *testing.T) {
	srv, n := robotsServer(t, serve(200, testRules))
	var d net.Dialer
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, srv.Listener.Addr().String()) // every origin is the loopback server
	}}
	t.Cleanup(tr.CloseIdleConnections)
	c := newCache(t, newFakeClock())
	c.Client = &http.Client{Transport: tr}
	c.idleFor = 200 * time.Millisecond
	idle := func() []chan *flight {
		deadline := time.Now().Add(5 * time.Second)
		for {
			c.mu.Lock()
			ch := slices.Clone(c.idle)
			c.mu.Unlock()
			if len(ch) > 0 || time.Now().After(deadline) {
				return ch
			}
			time.Sleep(time.Millisecond)
		}
	}
	var first []chan *flight
	for i, origin := range []string{"http://a.test", "http://b.test"} {
		e, err := c.Get(context.Background(), urlOf(t, origin+"/page"))
		if err != nil || e.State != StateParsed {
			t.Fatalf("Get(%s) = %v, state %v; want nil, parsed", origin, err, e.State)
		}
		ch := idle()
		if len(ch) != 1 {
			t.Fatalf("after Get(%s): %d idle fetch goroutines, want 1", origin, len(ch))
		}
		if i == 0 {
			first = ch
		} else if ch[0] != first[0] {
			t.Errorf("Get(%s) ran on a new fetch goroutine, want the idle one of the first fetch", origin)
		}
	}
	if got := n.Load(); got != 2 {
		t.Errorf("robots.txt fetched %d times, want 2", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.mu.Lock()
		left := len(c.idle)
		c.mu.Unlock()
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d idle fetch goroutines 5s after the last fetch, want none after %v", left, c.idleFor)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
