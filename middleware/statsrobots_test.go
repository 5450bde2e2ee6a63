package robotsmw

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/policy"
)

// TestStatsRobots: each robots.txt fetch of the Guard's own cache is
// counted once by result, whatever the number of pages that waited for
// it, and Robots.Unreachable counts the origins whose robots.txt is down
// now, until a fetch gives a verdict again.
func TestStatsRobots(t *testing.T) {
	// Each site on a loopback address of its own: a host's pause after
	// a failed robots.txt must not hold the others up.
	n := 10
	site := func(robots http.HandlerFunc) string {
		n++
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.%d:0", n))
		if err != nil {
			t.Fatal(err)
		}
		s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				robots(w, r)
				return
			}
			fmt.Fprint(w, "ok")
		}))
		s.Listener.Close()
		s.Listener = ln
		s.Start()
		t.Cleanup(s.Close)
		return s.URL
	}
	parsed := site(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "User-agent: *\nDisallow: /x\n") })
	gone := site(func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	busy := site(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTooManyRequests) })
	broken := site(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	slow := site(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	ln, err := net.Listen("tcp", "127.0.0.20:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	ln.Close()

	g := &Guard{Rate: rate.Inf, MaxRetries: 1, MaxRobotsFailures: 1, robotsLimit: time.Second} // parsed answers well within it, slow never
	c := colly.NewCollector(g.Attach, colly.Async(true))
	for _, s := range []string{parsed, gone, busy, broken, slow, refused} {
		for _, p := range []string{"/a", "/b"} {
			c.Visit(s + p)
		}
	}
	c.Wait()
	got := g.Stats().Robots
	want := policy.FetchStats{Parsed: 1, AllowAll: 1, Status429: 1, Status5xx: 1, Timeout: 1, Network: 1, Unreachable: 4}
	if got != want {
		t.Errorf("Stats().Robots = %+v, want %+v", got, want)
	}

	// A Cache of the caller's is counted by itself, and Stats shows it.
	own := &Guard{Rate: rate.Inf, Cache: &policy.Cache{}}
	c2 := colly.NewCollector(own.Attach)
	c2.Visit(parsed + "/c")
	if st := own.Stats().Robots; st != (policy.FetchStats{Parsed: 1}) {
		t.Errorf("Stats().Robots with Guard.Cache set = %+v, want its one fetch", st)
	}
}
