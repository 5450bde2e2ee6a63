package redisstore

import (
	"context"
	"fmt"
	"log/slog"
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

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/internal/redistest"
	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// webMemberEnv, when set in the environment of this test binary, makes it
// one member process set up as examples/fleet sets up its members (a
// Guard with MaxWait 5 s whose FollowLinks feeds the shared queue, queue
// threads, the fleet's log on stderr): "REDIS_ADDR PREFIX SITE_ADDR
// START_URL MEMBER_TTL_MS RATE THREADS". Every host is sent to SITE_ADDR;
// each request carries the member's pid in X-Member. START_URL "-" adds
// nothing to the queue.
const webMemberEnv = "ROBOTSMW_FLEET_WEB_MEMBER"

// webMemberProcess crawls until the fleet is drained, then prints how
// many pages it fetched and when the last one arrived (Unix nanoseconds).
func webMemberProcess(spec string) int {
	var addr, prefix, site, start string
	var ttl int64
	var r float64
	var threads int
	if n, err := fmt.Sscan(spec, &addr, &prefix, &site, &start, &ttl, &r, &threads); n < 7 {
		fmt.Fprintln(os.Stderr, "member:", err)
		return 2
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second, MaxRetries: -1})
	defer rdb.Close()
	if os.Getenv("ROBOTSMW_RT_DEBUG") != "" {
		counter := &commandCounter{n: map[string]int64{}}
		rdb.AddHook(counter)
		defer func() { fmt.Fprintln(os.Stderr, "round trips by command:", counter.reset()) }()
	}
	f := New(rdb)
	f.Prefix = prefix
	f.ttl = time.Duration(ttl) * time.Millisecond
	f.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	defer f.Close()
	g := &robotsmw.Guard{Agent: "FleetBot", Rate: rate.Limit(r), MaxWait: 5 * time.Second, Links: robotsmw.Links{Queue: f.Queue()}}
	f.Attach(g)
	tr := loopback(site)
	c := colly.NewCollector(func(c *colly.Collector) { c.WithTransport(tr) }, g.Attach)
	if err := c.SetStorage(f.Storage()); err != nil {
		fmt.Fprintln(os.Stderr, "member:", err)
		return 1
	}
	g.FollowLinks(c)
	pid := fmt.Sprint(os.Getpid())
	c.OnRequest(func(r *colly.Request) { r.Headers.Set("X-Member", pid) })
	fmt.Println("id", f.ID())
	var fetched, last atomic.Int64
	c.OnResponse(func(*colly.Response) {
		fetched.Add(1)
		last.Store(time.Now().UnixNano())
	})
	q, err := queue.New(threads, f.Queue())
	if err == nil && start != "-" {
		err = q.AddURL(start)
	}
	if err == nil {
		err = f.Run(context.Background(), q, c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "member:", err)
		return 1
	}
	fmt.Println(fetched.Load(), last.Load())
	return 0
}

// runWebMember runs one web member process to its end and returns the
// pages it fetched.
func runWebMember(t *testing.T, spec string) int64 {
	t.Helper()
	cmd, sc := startProcess(t, webMemberEnv, spec)
	var n int64
	for sc.Scan() {
		fmt.Sscan(sc.Text(), &n)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("member process: %v", err)
	}
	return n
}

// maxTurnsPerPage is the most Redis round trips a fetched page may cost a
// member, as the wire sees them.
const maxTurnsPerPage = 3.0

// One member process crawls through a proxy that counts the round trips
// on its connections to Redis (a pipeline is one): at most
// maxTurnsPerPage per page fetched, everything included (robots.txt, the
// heartbeat, joining), in both shapes: one busy host (300 pages of 20
// links, 4 threads, every thread waiting for the one host), and many hosts
// (1,000 hosts).
func TestRoundTripsPerPage(t *testing.T) {
	for _, tc := range []struct {
		name                string
		pages, hosts, links int
		delay               time.Duration
		rate                float64
		threads             int
	}{
		{"one host", 300, 1, 20, 10 * time.Millisecond, 50, 4},
		{"many hosts", 6000, 1000, 20, 5 * time.Millisecond, 50, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			proxy := redistest.StartTurnProxy(t, srv.Addr)
			site := newLinkWeb(t, tc.pages, tc.hosts, tc.links, tc.delay)
			spec := fmt.Sprintf("%s test:%s %s http://h0.test/p0 0 %g %d", proxy.Addr, strings.ReplaceAll(t.Name(), " ", "-"),
				strings.TrimPrefix(site.URL, "http://"), tc.rate, tc.threads)
			pages := runWebMember(t, spec)
			if pages != int64(tc.pages) {
				t.Fatalf("member fetched %d pages, want %d", pages, tc.pages)
			}
			per := float64(proxy.Turns()) / float64(pages)
			t.Logf("%s: %d round trips on %d connections for %d pages: %.2f per page", tc.name, proxy.Turns(), proxy.Conns(), pages, per)
			if per > maxTurnsPerPage {
				t.Errorf("%.2f Redis round trips per page fetched, want at most %g", per, maxTurnsPerPage)
			}
		})
	}
}

// A treeSite serves pages /p0 … /pN-1 of hosts h0.test … hH-1.test (page i
// on host i%H), each linking to its children fanout·i+1 … fanout·i+fanout:
// every page but /p0 is linked from one page only, so a page whose links
// were lost loses its whole subtree. It counts what it is asked for, and
// calls onPage, if set, with the number of pages asked for so far, before
// it answers.
type treeSite struct {
	*httptest.Server
	mu    sync.Mutex // guards hits
	hits  map[string]int
	pages atomic.Int64
}

func newTreeSite(t *testing.T, pages, hosts, fanout int, delay time.Duration, onPage func(n int64)) *treeSite {
	s := &treeSite{hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		s.mu.Lock()
		s.hits[r.Host+r.URL.Path]++
		s.mu.Unlock()
		n := s.pages.Add(1)
		if onPage != nil {
			onPage(n)
		}
		time.Sleep(delay)
		i, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p"))
		w.Header().Set("Content-Type", "text/html")
		var sb strings.Builder
		sb.WriteString("<html><body>")
		for k := fanout*i + 1; k <= fanout*i+fanout && k < pages; k++ {
			fmt.Fprintf(&sb, `<a href="http://h%d.test/p%d">%d</a> `, k%hosts, k, k)
		}
		sb.WriteString("</body></html>")
		fmt.Fprint(w, sb.String())
	}))
	t.Cleanup(s.Close)
	return s
}

// Redis fills up (maxmemory below what it uses, noeviction: every write
// answers OOM) while a page is being fetched, so that page's end, with
// its links, fails; a while later the limit is raised. The member pauses
// rather than stopping, says so at warning with what to do, resumes once
// writes succeed, and loses nothing: every page of a tree whose pages are
// each linked once is fetched, and the member exits 0.
func TestFleetRedisFullPauses(t *testing.T) {
	srv := redistest.Start(t)
	client := srv.Client()
	const pages, hosts = 200, 4
	var fullAt atomic.Int64
	site := newTreeSite(t, pages, hosts, 3, 10*time.Millisecond, func(n int64) {
		if n != 30 {
			return
		}
		ctx := context.Background()
		used := redisInfo(t, client, "memory", "used_memory")
		if err := client.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err(); err != nil {
			t.Error(err)
		}
		if err := client.ConfigSet(ctx, "maxmemory", strconv.FormatInt(int64(used/2), 10)).Err(); err != nil {
			t.Error(err)
		}
		fullAt.Store(time.Now().UnixNano())
	})
	stderr := &lockedBuffer{}
	spec := fmt.Sprintf("%s test:%s %s http://h0.test/p0 0 50 4", srv.Addr, t.Name(), strings.TrimPrefix(site.URL, "http://"))
	cmd, sc := startProcess(t, webMemberEnv, spec, stderr)
	done := make(chan error, 1)
	go func() {
		for sc.Scan() {
		}
		done <- cmd.Wait()
	}()
	for fullAt.Load() == 0 {
		select {
		case err := <-done:
			t.Fatalf("member ended before Redis was full: %v\n%s", err, stderr)
		case <-time.After(10 * time.Millisecond):
		}
	}
	select {
	case err := <-done:
		t.Fatalf("member ended while Redis was full: %v\n%s", err, stderr)
	case <-time.After(3 * time.Second):
	}
	during := site.pages.Load()
	if err := client.ConfigSet(context.Background(), "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("member after Redis took writes again: %v\n%s", err, stderr)
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("member still runs a minute after Redis took writes again\n%s", stderr)
	}
	log := stderr.String()
	for _, want := range []string{`msg="redis full"`, "raise maxmemory", `msg="redis takes writes again"`} {
		if !strings.Contains(log, want) {
			t.Errorf("member's log lacks %q:\n%s", want, log)
		}
	}
	site.mu.Lock()
	defer site.mu.Unlock()
	missing, twice := 0, 0
	for i := 0; i < pages; i++ {
		switch n := site.hits[fmt.Sprintf("h%d.test/p%d", i%hosts, i)]; {
		case n == 0:
			missing++
		case n > 1:
			twice++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d pages never fetched across the full Redis", missing, pages)
	}
	t.Logf("pages fetched by the time Redis was full: 30; 3 s later: %d; fetched twice: %d", during, twice)
	f := New(client)
	f.Prefix = "test:" + t.Name()
	defer f.Close()
	if st, err := f.Stats(context.Background()); err != nil || st.Queued != 0 || st.InFlight != 0 {
		t.Errorf("Stats after the crawl = %+v, %v; want nothing queued or held", st, err)
	}
}

// Three member processes crawl one host whose pages take 300 ms, one
// request in flight fleet-wide; one member is killed (SIGKILL) while the
// server works on one of its pages. Judged at the server: that page is
// fetched again within two member TTLs of the kill, while the others are
// still busy with the queue, and before any other request the killed
// member held (see docs/fleet.md), every time, the surviving members'
// queue threads all waiting for the host.
func TestFleetKilledMemberInFlightFirst(t *testing.T) {
	const runs = 3
	var delays []time.Duration
	for run := 0; run < runs; run++ {
		delays = append(delays, killInFlight(t, run))
	}
	t.Logf("the killed member's in-flight page was fetched again %v after the kill", delays)
}

func killInFlight(t *testing.T, run int) time.Duration {
	srv := redistest.Start(t)
	client := srv.Client()
	const pages, ttl = 60, 3 * time.Second
	type hit struct {
		path   string
		at     time.Time
		member string
	}
	var mu sync.Mutex // guards hits, victim, killed, inFlight
	var hits []hit
	var victim string // the pid of the member to kill
	var killed time.Time
	var inFlight string
	var kill func()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		m := r.Header.Get("X-Member")
		mu.Lock()
		hits = append(hits, hit{r.URL.Path, time.Now(), m})
		if killed.IsZero() && victim != "" && m == victim && len(hits) >= 10 {
			inFlight, killed = r.URL.Path, time.Now()
			kill()
		}
		mu.Unlock()
		time.Sleep(300 * time.Millisecond)
		fmt.Fprint(w, "<html>page</html>")
	}))
	defer site.Close()
	prefix := fmt.Sprintf("test:%s:%d", t.Name(), run)
	seedQueue(client, prefix, 1, pages)
	spec := fmt.Sprintf("%s %s %s - %d 2 4", srv.Addr, prefix, strings.TrimPrefix(site.URL, "http://"), ttl.Milliseconds())
	var cmds []*exec.Cmd
	ids := make([]string, 3)
	var wg sync.WaitGroup
	idSeen := make(chan struct{}, 3)
	for i := range ids {
		cmd, sc := startProcess(t, webMemberEnv, spec)
		cmds = append(cmds, cmd)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sc.Scan() {
				if id, ok := strings.CutPrefix(sc.Text(), "id "); ok {
					ids[i] = id
					idSeen <- struct{}{}
				}
			}
		}()
	}
	for range ids {
		<-idSeen
	}
	held := make(chan []string, 1)
	mu.Lock()
	victim = fmt.Sprint(cmds[0].Process.Pid)
	kill = func() {
		cmds[0].Process.Kill()
		go func() {
			// What the killed member held, as Redis has it.
			f := New(client)
			f.Prefix = prefix
			defer f.Close()
			f.init()
			es, _ := client.ZRange(context.Background(), f.base(0)+"hz:"+ids[0], 0, -1).Result()
			held <- es
		}()
	}
	mu.Unlock()
	wg.Wait()
	cmds[0].Wait()
	for i, cmd := range cmds[1:] {
		if err := cmd.Wait(); err != nil {
			t.Errorf("run %d: surviving member %d: %v", run, i+1, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if killed.IsZero() {
		t.Fatalf("run %d: the member was never killed", run)
	}
	var others []string
	for _, e := range <-held {
		if _, item, ok := strings.Cut(e, "\n"); ok {
			if _, path, ok := strings.Cut(item, " "); ok && path != inFlight {
				others = append(others, path)
			}
		}
	}
	first := map[string]time.Time{} // first fetch after the kill
	var again time.Time
	for _, h := range hits {
		if !h.at.After(killed) {
			continue
		}
		if h.path == inFlight && again.IsZero() {
			again = h.at
		}
		if _, ok := first[h.path]; !ok {
			first[h.path] = h.at
		}
	}
	end := hits[len(hits)-1].at
	if again.IsZero() {
		t.Fatalf("run %d: %s, in flight when its member was killed, never fetched again", run, inFlight)
	}
	d := again.Sub(killed)
	if d > 2*ttl {
		t.Errorf("run %d: %s, in flight when its member was killed, fetched again %v after the kill, later than two member TTLs (%v)", run, inFlight, d, 2*ttl)
	}
	if !again.Before(end) {
		t.Errorf("run %d: %s fetched again as the crawl ended, want while it was busy", run, inFlight)
	}
	for _, p := range others {
		if at, ok := first[p]; ok && at.Before(again) {
			t.Errorf("run %d: %s, held by the killed member, fetched %v after the kill, before %s, its page in flight (%v)", run, p, at.Sub(killed), inFlight, d)
		}
	}
	t.Logf("run %d: %s in flight at the kill, fetched again after %v; the member's %d other requests %v; the crawl ended %v after the kill", run, inFlight, d, len(others), others, end.Sub(killed))
	return d
}
