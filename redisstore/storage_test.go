package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/robotsmw/robotsmw/internal/redistest"
)

// testFleet returns a Fleet over srv, closed when the test ends.
func testFleet(t *testing.T, srv *redistest.Server) *Fleet {
	t.Helper()
	f := New(srv.Client())
	f.init()
	t.Cleanup(func() { f.Close() })
	return f
}

func TestVisitedMember(t *testing.T) {
	for _, tt := range []struct {
		id   uint64
		want string
	}{
		{0, "\x00\x00\x00\x00\x00\x00\x00\x00"},
		{1, "\x00\x00\x00\x00\x00\x00\x00\x01"},
		{0x0102030405060708, "\x01\x02\x03\x04\x05\x06\x07\x08"},
		{math.MaxUint64, "\xff\xff\xff\xff\xff\xff\xff\xff"},
	} {
		if got := visitedMember(tt.id); got != tt.want {
			t.Errorf("visitedMember(%#x) = %q, want %q", tt.id, got, tt.want)
		}
	}
}

func TestStorageVisited(t *testing.T) {
	srv := redistest.Start(t)
	a := testFleet(t, srv).Storage()
	b := testFleet(t, srv).Storage()

	// The calls run in order, each on the state the earlier ones left.
	for _, tt := range []struct {
		name    string
		s       *Storage
		visit   bool // Visited rather than IsVisited
		id      uint64
		want    bool  // IsVisited's answer
		wantErr error // Visited's error
	}{
		{name: "a", id: 7, want: false},
		{name: "b", id: 7, want: false},
		{name: "a", visit: true, id: 7},
		{name: "a", id: 7, want: true},
		{name: "b", id: 7, want: true},
		{name: "b", visit: true, id: 7, wantErr: ErrClaimed},
		{name: "a", visit: true, id: 7, wantErr: ErrClaimed},
		{name: "b", id: 8, want: false},
		{name: "b", id: 0, want: false},
		{name: "b", visit: true, id: 0},
		{name: "a", id: 0, want: true},
		{name: "a", id: math.MaxUint64, want: false},
	} {
		s := a
		if tt.name == "b" {
			s = b
		}
		if tt.visit {
			if err := s.Visited(tt.id); !errors.Is(err, tt.wantErr) {
				t.Errorf("%s.Visited(%d) = %v, want %v", tt.name, tt.id, err, tt.wantErr)
			}
			continue
		}
		got, err := s.IsVisited(tt.id)
		if err != nil || got != tt.want {
			t.Errorf("%s.IsVisited(%d) = %v, %v, want %v, nil", tt.name, tt.id, got, err, tt.want)
		}
	}
}

// TestStorageVisitedClaim checks that when many goroutines of two members
// pass IsVisited for one request at once, exactly one Visited succeeds.
func TestStorageVisitedClaim(t *testing.T) {
	srv := redistest.Start(t)
	stores := []*Storage{testFleet(t, srv).Storage(), testFleet(t, srv).Storage()}
	const workers = 32
	for id := uint64(1); id <= 10; id++ {
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			claimed int
			errs    []error
		)
		start := make(chan struct{})
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := stores[w%2]
				<-start
				// As colly's requestCheck does.
				visited, err := s.IsVisited(id)
				if err != nil || visited {
					mu.Lock()
					if err != nil {
						errs = append(errs, fmt.Errorf("IsVisited(%d): %w", id, err))
					}
					mu.Unlock()
					return
				}
				err = s.Visited(id)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					claimed++
				case !errors.Is(err, ErrClaimed):
					errs = append(errs, fmt.Errorf("Visited(%d): %w", id, err))
				}
			}()
		}
		close(start)
		wg.Wait()
		for _, err := range errs {
			t.Error(err)
		}
		if claimed != 1 {
			t.Errorf("Visited(%d) succeeded %d times in %d goroutines over 2 fleets, want once", id, claimed, workers)
		}
	}
}

func TestStorageCookies(t *testing.T) {
	srv := redistest.Start(t)
	a := testFleet(t, srv).Storage()
	b := testFleet(t, srv).Storage()
	u := func(s string) *url.URL {
		v, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// The calls run in order, each on the state the earlier ones left.
	for _, tt := range []struct {
		name   string
		s      *Storage
		set    bool // SetCookies rather than Cookies
		url    string
		cookie string // what SetCookies sets, or what Cookies returns
	}{
		{name: "a", s: a, url: "http://example.com/", cookie: ""},
		{name: "a", s: a, set: true, url: "http://example.com/x", cookie: "id=1"},
		{name: "a", s: a, url: "https://example.com/", cookie: "id=1"},
		// b reads a's cookies from Redis.
		{name: "b", s: b, url: "http://example.com/y", cookie: "id=1"},
		// Cookies are per host, port included (colly keys them by u.Host).
		{name: "b", s: b, url: "http://example.com:8080/", cookie: ""},
		{name: "b", s: b, url: "http://other.example/", cookie: ""},
		{name: "b", s: b, set: true, url: "http://example.com/", cookie: "id=2"},
		{name: "b", s: b, url: "http://example.com/", cookie: "id=2"},
		// a keeps the copy it read or wrote first: the cache is read
		// through, not invalidated.
		{name: "a", s: a, url: "http://example.com/", cookie: "id=1"},
		{name: "a", s: a, set: true, url: "http://new.example/", cookie: "k=v"},
		{name: "b", s: b, url: "http://new.example/", cookie: "k=v"},
	} {
		if tt.set {
			tt.s.SetCookies(u(tt.url), tt.cookie)
			continue
		}
		if got := tt.s.Cookies(u(tt.url)); got != tt.cookie {
			t.Errorf("%s.Cookies(%s) = %q, want %q", tt.name, tt.url, got, tt.cookie)
		}
	}

	// A third member, which has read nothing yet, sees b's last write.
	c := testFleet(t, srv).Storage()
	if got := c.Cookies(u("http://example.com/")); got != "id=2" {
		t.Errorf("c.Cookies(http://example.com/) = %q, want %q", got, "id=2")
	}
}

// TestStorageCookiesDown checks that cookies neither block nor fail while
// Redis is down: a member keeps what it holds.
func TestStorageCookiesDown(t *testing.T) {
	srv := redistest.Start(t)
	var (
		mu    sync.Mutex
		downs []error
	)
	f := New(srv.Client())
	f.OnDown = func(err error) {
		mu.Lock()
		downs = append(downs, err)
		mu.Unlock()
	}
	t.Cleanup(func() { f.Close() })
	s := f.Storage()
	known, _ := url.Parse("http://known.example/")
	unknown, _ := url.Parse("http://unknown.example/")
	s.SetCookies(known, "a=1")

	srv.Stop()
	if got := s.Cookies(unknown); got != "" {
		t.Errorf("Cookies(%s) with Redis down = %q, want \"\"", unknown, got)
	}
	if got := s.Cookies(known); got != "a=1" {
		t.Errorf("Cookies(%s) with Redis down = %q, want %q", known, got, "a=1")
	}
	s.SetCookies(known, "a=2")
	if got := s.Cookies(known); got != "a=2" {
		t.Errorf("Cookies(%s) after SetCookies with Redis down = %q, want %q", known, got, "a=2")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(downs) != 1 || downs[0] == nil {
		t.Errorf("OnDown calls = %v, want one with an error", downs)
	}
}

func TestStorageCookiesBound(t *testing.T) {
	s := &Storage{}
	for i := range maxCookieHosts + 10 {
		s.store(fmt.Sprintf("h%d.example", i), "c=1")
	}
	if n := len(s.cookies); n != maxCookieHosts {
		t.Errorf("after store of %d hosts, %d hosts kept, want %d", maxCookieHosts+10, n, maxCookieHosts)
	}
	last := fmt.Sprintf("h%d.example", maxCookieHosts+9)
	if got := s.cookies[last]; got != "c=1" {
		t.Errorf("cookies[%q] = %q after its store, want %q", last, got, "c=1")
	}
	// Replacing a kept host's cookies drops nothing.
	s.store(last, "c=2")
	if n := len(s.cookies); n != maxCookieHosts {
		t.Errorf("after storing a kept host again, %d hosts kept, want %d", n, maxCookieHosts)
	}
}

func TestClear(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client()
	f := testFleet(t, srv)
	ctx := context.Background()
	u, _ := url.Parse("http://example.com/")

	if err := f.Queue().AddRequest(serial(t, "http://example.com/a")); err != nil {
		t.Fatalf("AddRequest: %v", err)
	}
	if err := f.Storage().Visited(1); err != nil {
		t.Fatalf("Visited(1): %v", err)
	}
	f.Storage().SetCookies(u, "a=1")
	if _, err := f.front.step(ctx); err != nil { // makes f live
		t.Fatalf("step: %v", err)
	}
	b := f.base(0)
	keys := []string{
		f.meta(0), b + "ready", b + "q:example.com:1", b + "n", b + "m", b + "s:" + f.bucket(f.requestID("http://example.com/a", nil)),
		f.crawlKey("visited"), f.crawlKey("cookies"),
	}
	if n, err := rdb.Exists(ctx, keys...).Result(); err != nil || n != int64(len(keys)) {
		t.Fatalf("EXISTS %v before Clear = %d, %v, want %d", keys, n, err, len(keys))
	}

	if err := f.Clear(ctx); err == nil || !strings.Contains(err.Error(), "1 members are running") {
		t.Fatalf("Clear with a live member = %v, want a refusal naming it", err)
	}
	f.front.leave()
	if err := f.Clear(ctx); err != nil {
		t.Fatalf("Clear: %v", err)
	}
	if n, err := rdb.Exists(ctx, keys...).Result(); err != nil || n != 0 {
		t.Errorf("EXISTS %v after Clear = %d, %v, want 0", keys, n, err)
	}
	if v, err := f.Storage().IsVisited(1); err != nil || v {
		t.Errorf("IsVisited(1) after Clear = %v, %v, want false, nil", v, err)
	}
	if got := f.Storage().Cookies(u); got != "" {
		t.Errorf("Cookies(%s) after Clear = %q, want \"\"", u, got)
	}
	if n, err := f.Queue().QueueSize(); err != nil || n != 0 {
		t.Errorf("QueueSize() after Clear = %d, %v, want 0, nil", n, err)
	}

	srv.Stop()
	if err := f.Clear(ctx); err == nil {
		t.Errorf("Clear with Redis down = nil, want an error")
	}
}
