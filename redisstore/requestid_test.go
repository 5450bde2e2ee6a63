package redisstore

import (
	"encoding/json"

	"net/url"
	"sync"
	"testing"

	"github.com/gocolly/colly/v2"
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

// FuzzDecodeEntry checks the queue entries' parser: it never panics, and
// what encode wrote decodes to the same request, named by the same id.
func FuzzDecodeEntry(f *testing.F) {
	for _, s := range []string{"x.test\n1h1 /a?b=c", "x.test\n0s0 ", "x.test\n0j{\"URL\":\"http://x.test/\",\"Method\":\"POST\",\"Body\":\"YQ==\"}", "x\nq", "\n", "h\nh-1 /"} {
		f.Add(s)
	}
	fl := New(nil)
	fl.init()
	f.Fuzz(func(t *testing.T, entry string) {
		r, err := fl.decode(entry, false)
		if err != nil {
			return
		}
		var s serialRequest
		if err := json.Unmarshal(r, &s); err != nil {
			t.Fatalf("decode(%q) = %q, not JSON: %v", entry, r, err)
		}
		if s.Ctx[ctxLease] != entry {
			t.Fatalf("decode(%q) carries lease %q", entry, s.Ctx[ctxLease])
		}
		delete(s.Ctx, ctxLease)
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		a, err := fl.encode(b)
		if err != nil {
			return // not a request encode takes (no host)
		}
		again, err := fl.decode(a.host+"\n"+a.item, false)
		if err != nil {
			t.Fatalf("decode(encode(decode(%q))) = %v", entry, err)
		}
		var s2 serialRequest
		if err := json.Unmarshal(again, &s2); err != nil || s2.URL != s.URL || s2.Method != s.Method && s.Method != "" || s2.Depth != s.Depth {
			t.Fatalf("round trip of %q: %+v, then %+v", entry, s, s2)
		}
		if fl.requestID(s.URL, s.Body) != a.id {
			t.Fatalf("encode(%q) id %x, want colly's %x", s.URL, a.id, fl.requestID(s.URL, s.Body))
		}
	})
}
