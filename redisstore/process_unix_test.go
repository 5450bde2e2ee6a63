//go:build unix

package redisstore

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/internal/redistest"
)

// A member stopped (SIGSTOP) for three TTLs while the others crawl, then
// continued (SIGCONT), sends no burst: its requests were given to the
// others, and it drops those it had not sent; no host gets more than its
// rate in any second, and every page is fetched.
func TestFleetStoppedMemberNoBurst(t *testing.T) {
	srv := redistest.Start(t)
	s := newFaultSite(t, 50*time.Millisecond)
	const hosts, pages, ttl, perHost = 10, 30, time.Second, 5.0
	cmds, wg := startFleet(t, srv.Addr, srv.Client(), s, hosts, pages, 3, ttl, perHost)
	for s.total() < 40 {
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
	s.mu.Lock()
	defer s.mu.Unlock()
	missing, again := 0, 0
	for h := 0; h < hosts; h++ {
		var at []time.Time
		for p := 0; p < pages; p++ {
			got := s.hits[fmt.Sprintf("h%d.test/p%d", h, p)]
			switch {
			case len(got) == 0:
				missing++
			case len(got) > 1:
				again += len(got) - 1
			}
			at = append(at, got...)
		}
		if n := busiestSecond(at); n > perHost+1 {
			t.Errorf("h%d.test got %d requests in one second, want at most %g (+1 for arrival jitter)", h, n, perHost)
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d pages never fetched", missing, hosts*pages)
	}
	if again > 5 {
		t.Errorf("%d pages fetched again, want at most the stopped member's requests in flight", again)
	}
	t.Logf("fetched again: %d", again)
}
