//go:build unix

package redisstore

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/internal/redistest"
)

// Three member processes crawl four hosts; one is stopped (SIGSTOP) for
// three TTLs mid-crawl, then continued. Judged at the server, per host:
// never more than one request in flight, starts at least the rate's
// interval apart (less arrival jitter), every page fetched.
func TestTrialBFleetStoppedProcessInFlight(t *testing.T) {
	srv := redistest.Start(t)
	const hosts, pages, ttl, perHost = 4, 12, 600 * time.Millisecond, 10.0
	type span struct{ start, end time.Time }
	var mu sync.Mutex
	inFlight := map[string]int{}
	peak := map[string]int{}
	spans := map[string][]span{}
	s := &faultSite{hits: map[string][]time.Time{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		start := time.Now()
		mu.Lock()
		s.mu.Lock()
		s.hits[r.Host+r.URL.Path] = append(s.hits[r.Host+r.URL.Path], start)
		s.all = append(s.all, start)
		s.mu.Unlock()
		inFlight[r.Host]++
		peak[r.Host] = max(peak[r.Host], inFlight[r.Host])
		mu.Unlock()
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		inFlight[r.Host]--
		spans[r.Host] = append(spans[r.Host], span{start, time.Now()})
		mu.Unlock()
		fmt.Fprint(w, "<html>page</html>")
	}))
	t.Cleanup(s.Close)
	cmds, wg := startFleet(t, srv.Addr, srv.Client(), s, hosts, pages, 3, ttl, perHost)
	for s.total() < 12 {
		time.Sleep(5 * time.Millisecond)
	}
	cmds[0].Process.Signal(syscall.SIGSTOP)
	time.Sleep(3 * ttl)
	cmds[0].Process.Signal(syscall.SIGCONT)
	wg.Wait()
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("member %d: %v", i, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for h := 0; h < hosts; h++ {
		host := fmt.Sprintf("h%d.test", h)
		if peak[host] > 1 {
			t.Errorf("%s: %d requests in flight at once, want ≤ 1", host, peak[host])
		}
		sp := spans[host]
		sort.Slice(sp, func(i, j int) bool { return sp[i].start.Before(sp[j].start) })
		for i := 1; i < len(sp); i++ {
			if d := sp[i].start.Sub(sp[i-1].start); d < time.Second/perHost-arrivalJitter {
				t.Errorf("%s: a request started %v after the one before, want ≥ %v", host, d, time.Second/perHost)
			}
		}
		for p := 0; p < pages; p++ {
			if len(s.hits[fmt.Sprintf("%s/p%d", host, p)]) == 0 {
				t.Errorf("%s/p%d never fetched", host, p)
			}
		}
	}
}
