package redisstore

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/robotsmw/robotsmw/internal/redistest"
)

// memberEnv, when set in the environment of this test binary, makes it
// one member process of BenchmarkFleetProcesses or
// TestFleetSurvivesKilledMember instead of running tests: "REDIS_ADDR
// PREFIX SITE_ADDR [MEMBER_TTL_MS]".
const memberEnv = "ROBOTSMW_FLEET_MEMBER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(memberEnv); spec != "" {
		os.Exit(memberProcess(spec))
	}
	os.Exit(m.Run())
}

// memberProcess crawls the shared queue until the fleet is drained, then
// prints how many pages it fetched and when the last one arrived (Unix
// nanoseconds).
func memberProcess(spec string) int {
	var addr, prefix, site string
	var ttl int64
	if n, err := fmt.Sscan(spec, &addr, &prefix, &site, &ttl); n < 3 {
		fmt.Fprintln(os.Stderr, "member:", err)
		return 2
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	f := New(rdb)
	f.Prefix = prefix
	f.ttl = time.Duration(ttl) * time.Millisecond
	defer f.Close()
	var fetched, last atomic.Int64
	if err := crawlShared(f, loopback(site), &fetched, &last); err != nil {
		fmt.Fprintln(os.Stderr, "member:", err)
		return 1
	}
	fmt.Println(fetched.Load(), last.Load())
	return 0
}

// startMember starts this test binary as a member process.
func startMember(t testing.TB, spec string) (*exec.Cmd, *bufio.Scanner) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), memberEnv+"="+spec)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewScanner(out)
}

// A member killed in the middle of a crawl (SIGKILL) loses nothing: once
// its heartbeat has been silent for two TTLs, another member puts the
// requests it held back in the queue, and the survivors finish the crawl.
// Requests it had sent whose answers it never read may be fetched again.
func TestFleetSurvivesKilledMember(t *testing.T) {
	srv := redistest.Start(t)
	var mu sync.Mutex
	hits := map[string]int{}
	total := 0
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		mu.Lock()
		hits[r.Host+r.URL.Path]++
		total++
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		fmt.Fprint(w, "<html>page</html>")
	}))
	defer site.Close()
	const hosts, pages = 10, 30
	prefix := "test:" + t.Name()
	seedQueue(srv.Client(), prefix, hosts, pages)
	spec := srv.Addr + " " + prefix + " " + strings.TrimPrefix(site.URL, "http://") + " 2000"
	var cmds []*exec.Cmd
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		cmd, sc := startMember(t, spec)
		cmds = append(cmds, cmd)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sc.Scan() {
			}
		}()
	}
	for {
		mu.Lock()
		n := total
		mu.Unlock()
		if n >= 60 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmds[0].Process.Kill()
	wg.Wait()
	if err := cmds[0].Wait(); err == nil {
		t.Errorf("the killed member exited cleanly")
	}
	for i, cmd := range cmds[1:] {
		if err := cmd.Wait(); err != nil {
			t.Errorf("surviving member %d: %v", i+1, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	missing, again := 0, 0
	for p := 0; p < pages; p++ {
		for h := 0; h < hosts; h++ {
			switch n := hits[fmt.Sprintf("h%d.test/p%d", h, p)]; {
			case n == 0:
				missing++
			case n > 1:
				again += n - 1
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d pages never fetched after a member was killed", missing, hosts*pages)
	}
	if again > 4 {
		t.Errorf("%d pages fetched again, want at most the killed member's 4 requests in flight", again)
	}
}

// BenchmarkFleetProcesses is BenchmarkFleetThroughput with each member a
// process of its own (this test binary, started again as a member): 1 and
// 3 processes crawl hosts×pages pages from the shared queue, each page
// answering after 20 ms, 4 queue threads per process, 50 requests/s per
// host (not the limit). It reports pages per second from the start of the
// processes to the last page.
func BenchmarkFleetProcesses(b *testing.B) {
	for _, members := range []int{1, 3} {
		b.Run(fmt.Sprintf("processes=%d", members), func(b *testing.B) {
			srv := redistest.Start(b)
			site, _ := manyHosts(b, 20*time.Millisecond)
			siteAddr := strings.TrimPrefix(site.URL, "http://")
			const hosts, pages = 60, 20
			for i := 0; i < b.N; i++ {
				prefix := fmt.Sprintf("bench:%s:%d", strings.ReplaceAll(b.Name(), "/", "-"), i)
				seedQueue(srv.Client(), prefix, hosts, pages)
				var wg sync.WaitGroup
				var mu sync.Mutex
				var total, last int64
				start := time.Now()
				for m := 0; m < members; m++ {
					cmd, sc := startMember(b, srv.Addr+" "+prefix+" "+siteAddr)
					wg.Add(1)
					go func() {
						defer wg.Done()
						var n, at int64
						for sc.Scan() {
							f := strings.Fields(sc.Text())
							if len(f) == 2 {
								n, _ = strconv.ParseInt(f[0], 10, 64)
								at, _ = strconv.ParseInt(f[1], 10, 64)
							}
						}
						if err := cmd.Wait(); err != nil {
							b.Errorf("member process: %v", err)
						}
						mu.Lock()
						total += n
						last = max(last, at)
						mu.Unlock()
					}()
				}
				wg.Wait()
				if total != hosts*pages {
					b.Fatalf("processes fetched %d pages, want %d", total, hosts*pages)
				}
				b.ReportMetric(float64(total)/time.Unix(0, last).Sub(start).Seconds(), "pages/s")
			}
		})
	}
}
