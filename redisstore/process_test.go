package redisstore

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/internal/redistest"
)

// memberEnv, when set in the environment of this test binary, makes it
// one member process of BenchmarkFleetProcesses or
// the fault tests instead of running tests: "REDIS_ADDR PREFIX SITE_ADDR
// [MEMBER_TTL_MS [RATE]]"; REDIS_ADDR is a comma-separated list of the
// masters of a Redis Cluster when it has commas.
const memberEnv = "ROBOTSMW_FLEET_MEMBER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(memberEnv); spec != "" {
		os.Exit(memberProcess(spec))
	}
	if spec := os.Getenv(webMemberEnv); spec != "" {
		os.Exit(webMemberProcess(spec))
	}
	os.Exit(m.Run())
}

// memberProcess crawls the shared queue until the fleet is drained, then
// prints how many pages it fetched and when the last one arrived (Unix
// nanoseconds).
func memberProcess(spec string) int {
	var addr, prefix, site string
	var ttl int64
	r := 50.0
	if n, err := fmt.Sscan(spec, &addr, &prefix, &site, &ttl, &r); n < 3 {
		fmt.Fprintln(os.Stderr, "member:", err)
		return 2
	}
	var rdb redis.UniversalClient = redis.NewClient(&redis.Options{Addr: addr})
	if strings.Contains(addr, ",") {
		rdb = redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(addr, ",")})
	}
	defer rdb.Close()
	f := New(rdb)
	f.Prefix = prefix
	f.ttl = time.Duration(ttl) * time.Millisecond
	defer f.Close()
	var fetched, last atomic.Int64
	if err := crawlShared(f, loopback(site), rate.Limit(r), &fetched, &last); err != nil {
		fmt.Fprintln(os.Stderr, "member:", err)
		return 1
	}
	fmt.Println(fetched.Load(), last.Load())
	return 0
}

// startMember starts this test binary as a member process; its stderr
// goes to the test's, and to stderr if given.
func startMember(t testing.TB, spec string, stderr ...io.Writer) (*exec.Cmd, *bufio.Scanner) {
	return startProcess(t, memberEnv, spec, stderr...)
}

// startProcess starts this test binary with env set to spec.
func startProcess(t testing.TB, env, spec string, stderr ...io.Writer) (*exec.Cmd, *bufio.Scanner) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+spec)
	cmd.Stderr = io.MultiWriter(append(stderr, os.Stderr)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewScanner(out)
}

// faultSite serves hosts×pages pages (http://hH.test/pP), each after
// delay, and records when each was asked for.
type faultSite struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string][]time.Time // guarded by mu
	all  []time.Time            // guarded by mu
}

func newFaultSite(t *testing.T, delay time.Duration) *faultSite {
	s := &faultSite{hits: map[string][]time.Time{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		s.mu.Lock()
		s.hits[r.Host+r.URL.Path] = append(s.hits[r.Host+r.URL.Path], time.Now())
		s.all = append(s.all, time.Now())
		s.mu.Unlock()
		time.Sleep(delay)
		fmt.Fprint(w, "<html>page</html>")
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *faultSite) total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.all)
}

// startFleet seeds the queue and starts n member processes with the
// given TTL and rate; it returns them and a WaitGroup done when their
// output ends.
func startFleet(t *testing.T, addr string, client redis.UniversalClient, s *faultSite, hosts, pages, n int, ttl time.Duration, r float64) ([]*exec.Cmd, *sync.WaitGroup) {
	prefix := "test:" + t.Name()
	seedQueue(client, prefix, hosts, pages)
	spec := fmt.Sprintf("%s %s %s %d %g", addr, prefix, strings.TrimPrefix(s.URL, "http://"), ttl.Milliseconds(), r)
	var cmds []*exec.Cmd
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		cmd, sc := startMember(t, spec)
		cmds = append(cmds, cmd)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sc.Scan() {
			}
		}()
	}
	return cmds, &wg
}

// Redis restarted empty (no persistence) in the middle of a crawl: every
// member process stops with the crawl lost and a non-zero exit, rather
// than finishing "successfully" with pages never fetched.
func TestFleetRedisRestartedEmpty(t *testing.T) {
	srv := redistest.Start(t)
	s := newFaultSite(t, 50*time.Millisecond)
	prefix := "test:" + t.Name()
	seedQueue(srv.Client(), prefix, 10, 30)
	spec := fmt.Sprintf("%s %s %s", srv.Addr, prefix, strings.TrimPrefix(s.URL, "http://"))
	var cmds []*exec.Cmd
	var errs []*lockedBuffer
	for i := 0; i < 2; i++ {
		e := &lockedBuffer{}
		cmd, sc := startMember(t, spec, e)
		go func() {
			for sc.Scan() {
			}
		}()
		cmds = append(cmds, cmd)
		errs = append(errs, e)
	}
	for s.total() < 40 {
		time.Sleep(5 * time.Millisecond)
	}
	srv.Wipe()
	for i, cmd := range cmds {
		err := cmd.Wait()
		if err == nil || !strings.Contains(errs[i].String(), "is gone from Redis") {
			t.Errorf("member %d after Redis restarted empty: %v, stderr %q; want a non-zero exit and the crawl lost", i, err, errs[i].String())
		}
	}
}

// A member process pointed at a server that is not Redis (here an HTTP
// server) stops with ErrNotRedis and a non-zero exit within seconds,
// rather than waiting for "Redis" for ever.
func TestFleetMemberNotRedis(t *testing.T) {
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer web.Close()
	addr := strings.TrimPrefix(web.URL, "http://")
	e := &lockedBuffer{}
	cmd, sc := startMember(t, addr+" test:notredis "+addr, e)
	go func() {
		for sc.Scan() {
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(e.String(), "does not speak the Redis protocol") {
			t.Errorf("member against an HTTP server: %v, stderr %q; want a non-zero exit and ErrNotRedis", err, e.String())
		}
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatal("member against an HTTP server still runs after 15 s")
	}
}

// A lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A member killed in the middle of a crawl (SIGKILL) loses nothing: the
// requests it held are given back once its lease deadline passed, while
// the others are still busy with the queue (within two TTLs and a
// heartbeat of the kill), to the front of their hosts' queues, and the
// survivors finish the crawl. Requests it had sent whose answers it
// never read are fetched again.
func TestFleetSurvivesKilledMember(t *testing.T) {
	t.Run("single", func(t *testing.T) {
		srv := redistest.Start(t)
		testKilledMember(t, srv.Addr, srv.Client())
	})
	t.Run("cluster", func(t *testing.T) {
		c := redistest.StartCluster(t)
		testKilledMember(t, strings.Join(c.Addrs, ","), c.Client())
	})
}

func testKilledMember(t *testing.T, addr string, client redis.UniversalClient) {
	s := newFaultSite(t, 100*time.Millisecond)
	const hosts, pages, ttl = 10, 30, time.Second
	cmds, wg := startFleet(t, addr, client, s, hosts, pages, 3, ttl, 50)
	for s.total() < 60 {
		time.Sleep(5 * time.Millisecond)
	}
	cmds[0].Process.Kill()
	killed := time.Now()
	wg.Wait()
	if err := cmds[0].Wait(); err == nil {
		t.Errorf("the killed member exited cleanly")
	}
	for i, cmd := range cmds[1:] {
		if err := cmd.Wait(); err != nil {
			t.Errorf("surviving member %d: %v", i+1, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	end := s.all[len(s.all)-1]
	missing, again := 0, 0
	// Returned within two TTLs and a heartbeat; then it waits for its
	// host's turn at the fleet's rate, and a loaded machine schedules late.
	bound := 2*ttl + ttl/3 + 1500*time.Millisecond
	for p := 0; p < pages; p++ {
		for h := 0; h < hosts; h++ {
			at := s.hits[fmt.Sprintf("h%d.test/p%d", h, p)]
			switch {
			case len(at) == 0:
				missing++
			case len(at) > 1:
				again += len(at) - 1
				if d := at[1].Sub(killed); d > bound {
					t.Errorf("h%d.test/p%d fetched again %v after the kill, want within %v", h, p, d, bound)
				}
				if !at[1].Before(end) {
					t.Errorf("h%d.test/p%d fetched again as the crawl ended, want while the queue was busy", h, p)
				}
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d pages never fetched after a member was killed", missing, hosts*pages)
	}
	if again > 5 {
		t.Errorf("%d pages fetched again, want at most the killed member's 4 requests in flight and 1 popped", again)
	}
	t.Logf("fetched again: %d; crawl ended %v after the kill", again, end.Sub(killed))
}

// busiestSecond returns the most times in any window of one second.
func busiestSecond(at []time.Time) int {
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	most := 0
	for i := range at {
		n := 0
		for j := i; j < len(at) && at[j].Sub(at[i]) < time.Second-arrivalJitter; j++ {
			n++
		}
		most = max(most, n)
	}
	return most
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
