package redisstore

import (
	"context"
	"encoding/binary"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/robotsmw/robotsmw/internal/redistest"
)

// idStorage is a colly storage that records the ids colly asks about.
type idStorage struct {
	mu  sync.Mutex // guards ids
	ids []uint64
}

func (s *idStorage) Init() error             { return nil }
func (s *idStorage) Visited(id uint64) error { return nil }
func (s *idStorage) IsVisited(id uint64) (bool, error) {
	s.mu.Lock()
	s.ids = append(s.ids, id)
	s.mu.Unlock()
	return false, nil
}
func (s *idStorage) Cookies(*url.URL) string     { return "" }
func (s *idStorage) SetCookies(*url.URL, string) {}

// The fleet names requests as colly does, so that the visited set and
// what a member holds agree.
func TestRequestIDMatchesColly(t *testing.T) {
	f := New(nil)
	f.init()
	st := &idStorage{}
	c := colly.NewCollector()
	if err := c.SetStorage(st); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{
		"http://example.com", "http://example.com/", "HTTP://Example.COM:80/a/../b?q=1#frag",
		"https://bücher.example/straße?x=ä", "http://example.com/100%", "http://example.com/a%2Fb?c=%zz",
	} {
		st.ids = nil
		c.HasVisited(u)
		if len(st.ids) != 1 {
			t.Fatalf("colly asked about %d ids for %q", len(st.ids), u)
		}
		if got, want := f.requestID(u, nil), st.ids[0]; got != want {
			t.Errorf("requestID(%q) = %x, colly's = %x", u, got, want)
		}
	}
}

// What a member took from the queue and had not finished when it died
// goes back to the queue, with its claim released, when another member
// takes stock; what it finished does not.
func TestDeadMemberRequestsReturn(t *testing.T) {
	srv := redistest.Start(t)
	a, b := New(srv.Client()), New(srv.Client())
	ctx := context.Background()
	var urls []string
	for _, p := range []string{"/1", "/2", "/3", "/4"} {
		u, _ := url.Parse("http://example.com" + p)
		r, _ := (&colly.Request{URL: u, Method: "GET"}).Marshal()
		if err := a.Queue().AddRequest(r); err != nil {
			t.Fatal(err)
		}
		urls = append(urls, u.String())
	}
	// a takes three: it claims the first (in flight), finishes the
	// second, and holds the third (deferred, say).
	var popped []*colly.Request
	c := colly.NewCollector()
	for i := 0; i < 3; i++ {
		raw, err := a.Queue().GetRequest()
		if err != nil || raw == nil {
			t.Fatalf("GetRequest #%d = %q, %v", i, raw, err)
		}
		r, err := c.UnmarshalRequest(raw)
		if err != nil {
			t.Fatalf("GetRequest #%d gave %q: %v", i, raw, err)
		}
		popped = append(popped, r)
	}
	if err := a.Storage().Visited(a.requestID(urls[0], nil)); err != nil {
		t.Fatal(err)
	}
	a.release(popped[1])
	if err := a.Storage().Visited(a.requestID(urls[1], nil)); err != nil {
		t.Fatal(err)
	}
	// a dies. It never beat (no Run), so b finds it dead once b itself
	// has been live for two TTLs.
	b.ttl = 50 * time.Millisecond
	m := &member{f: b}
	for i := 0; i < 8; i++ {
		if _, err := m.step(); err != nil {
			t.Fatal(err)
		}
		if n, _ := b.Queue().QueueSize(); n == 3 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n, _ := b.Queue().QueueSize(); n != 3 {
		t.Errorf("queue holds %d after a's death, want 3 (its in-flight and held requests, and the one it never took)", n)
	}
	if v, _ := b.Storage().IsVisited(a.requestID(urls[0], nil)); v {
		t.Errorf("a's claim on %s survived its death", urls[0])
	}
	if v, _ := b.Storage().IsVisited(a.requestID(urls[1], nil)); !v {
		t.Errorf("a's finished %s is no longer visited", urls[1])
	}
	got := map[string]bool{}
	for {
		raw, err := b.Queue().GetRequest()
		if err != nil || raw == nil {
			break
		}
		r, _ := c.UnmarshalRequest(raw)
		got[r.URL.String()] = true
	}
	for _, u := range []string{urls[0], urls[2], urls[3]} {
		if !got[u] {
			t.Errorf("%s not given to b after a's death; b got %v", u, got)
		}
	}
	if n := srv.Client().Exists(ctx, a.heldKey(a.ID())).Val(); n != 0 {
		t.Errorf("a's held hash is still there")
	}
	var id [8]byte
	binary.BigEndian.PutUint64(id[:], a.requestID(urls[0], nil))
	if srv.Client().HExists(ctx, b.heldKey(b.ID()), string(id[:])).Val() != true {
		t.Errorf("b does not hold %s after taking it", urls[0])
	}
}

// After a Redis outage every member's registration has expired, but none
// is dead: nothing a live member holds is taken back from it.
func TestOutageTakesNothingBack(t *testing.T) {
	srv := redistest.Start(t)
	a, b := New(srv.Client()), New(srv.Client())
	a.ttl, b.ttl = 50*time.Millisecond, 50*time.Millisecond
	u, _ := url.Parse("http://example.com/held")
	r, _ := (&colly.Request{URL: u, Method: "GET"}).Marshal()
	if err := a.Queue().AddRequest(r); err != nil {
		t.Fatal(err)
	}
	ma, mb := &member{f: a}, &member{f: b}
	ma.step()
	mb.step()
	if raw, err := a.Queue().GetRequest(); raw == nil || err != nil {
		t.Fatalf("GetRequest = %q, %v", raw, err)
	}
	time.Sleep(300 * time.Millisecond) // no member reaches Redis: six TTLs
	for i := 0; i < 5; i++ {           // b is back first, then both
		mb.step()
		if i > 0 {
			ma.step()
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n, _ := b.Queue().QueueSize(); n != 0 {
		t.Errorf("queue holds %d after the outage: a live member's request was taken back", n)
	}
	if n := srv.Client().HLen(context.Background(), a.heldKey(a.ID())).Val(); n != 1 {
		t.Errorf("a holds %d requests after the outage, want 1", n)
	}
}

// Every key of the crawl's shared state has a TTL, so a crawl left alone
// is forgotten.
func TestCrawlKeysExpire(t *testing.T) {
	srv := redistest.Start(t)
	f := New(srv.Client())
	u, _ := url.Parse("http://example.com/a")
	r, _ := (&colly.Request{URL: u, Method: "GET"}).Marshal()
	if err := f.Queue().AddRequest(r); err != nil {
		t.Fatal(err)
	}
	if err := f.Queue().AddRequest(r); err != nil {
		t.Fatal(err)
	}
	if _, err := (&member{f: f}).step(); err != nil { // members, since, busy
		t.Fatal(err)
	}
	if raw, err := f.Queue().GetRequest(); raw == nil || err != nil { // popped, held, holders
		t.Fatalf("GetRequest = %q, %v", raw, err)
	}
	if err := f.Storage().Visited(f.requestID(u.String(), nil)); err != nil {
		t.Fatal(err)
	}
	f.Storage().SetCookies(u, "a=1")
	for _, key := range []string{
		f.crawlKey("queue"), f.crawlKey("visited"), f.crawlKey("popped"), f.heldKey(f.ID()),
		f.crawlKey("holders"), f.crawlKey("members"), f.crawlKey("since"), f.crawlKey("busy"),
		f.crawlKey("cookies"),
	} {
		if ttl := srv.Client().PTTL(context.Background(), key).Val(); ttl <= 0 {
			t.Errorf("PTTL(%s) = %v, want a TTL", key, ttl)
		}
	}
}
