package redisstore

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
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

// linkWeb serves a web of pages pages spread over hosts hosts: page i is
// http://hI%hosts.test/pI and links to pages 20i+1 … 20i+links (modulo
// pages), so every page is reachable from p0 and the last pages' links
// are duplicates. Each page answers after delay.
func linkWeb(b testing.TB, pages, hosts, links int, delay time.Duration) http.RoundTripper {
	s := newLinkWeb(b, pages, hosts, links, delay)
	tr := loopback(strings.TrimPrefix(s.URL, "http://"))
	b.Cleanup(tr.CloseIdleConnections)
	return tr
}

// newLinkWeb is the server of linkWeb, closed when the test ends.
func newLinkWeb(b testing.TB, pages, hosts, links int, delay time.Duration) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
			return
		}
		i, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p"))
		time.Sleep(delay)
		w.Header().Set("Content-Type", "text/html")
		var sb strings.Builder
		sb.WriteString("<html><body>")
		for k := 1; k <= links; k++ {
			j := (links*i + k) % pages
			fmt.Fprintf(&sb, `<a href="http://h%d.test/p%d">%d</a> `, j%hosts, j, k)
		}
		sb.WriteString("</body></html>")
		fmt.Fprint(w, sb.String())
	}))
	b.Cleanup(s.Close)
	return s
}

// crawlWeb is one member crawling a linkWeb from the shared queue: a
// Guard at r per host, FollowLinks to the queue, threads queue threads.
func crawlWeb(f *Fleet, tr http.RoundTripper, r rate.Limit, threads int, fetched *atomic.Int64) error {
	g := &robotsmw.Guard{Rate: r, MaxWait: time.Second, Links: robotsmw.Links{Queue: f.Queue()}}
	f.Attach(g)
	c := colly.NewCollector(func(c *colly.Collector) { c.WithTransport(tr) }, g.Attach)
	if err := c.SetStorage(f.Storage()); err != nil {
		return err
	}
	g.FollowLinks(c)
	c.OnResponse(func(*colly.Response) { fetched.Add(1) })
	q, err := queue.New(threads, f.Queue())
	if err != nil {
		return err
	}
	if err := q.AddURL("http://h0.test/p0"); err != nil {
		return err
	}
	return f.Run(context.Background(), q, c)
}

// redisInfo sums the numeric fields named in section of INFO over the
// Redis servers of client (every master of a cluster).
func redisInfo(b testing.TB, client redis.UniversalClient, section string, fields ...string) float64 {
	var mu sync.Mutex
	var sum float64
	read := func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, section).Result()
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		for _, line := range strings.Split(info, "\n") {
			k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
			for _, f := range fields {
				if k == f {
					x, _ := strconv.ParseFloat(v, 64)
					sum += x
				}
			}
		}
		return nil
	}
	var err error
	switch c := client.(type) {
	case *redis.Client:
		err = read(context.Background(), c)
	case *redis.ClusterClient:
		err = c.ForEachMaster(context.Background(), read)
	}
	if err != nil {
		b.Fatal(err)
	}
	return sum
}

// redisCPU returns the CPU seconds (user + system) the Redis servers of
// client have used.
func redisCPU(b testing.TB, client redis.UniversalClient) float64 {
	return redisInfo(b, client, "cpu", "used_cpu_sys", "used_cpu_user")
}

// redisMemory returns the bytes the Redis servers of client use.
func redisMemory(b testing.TB, client redis.UniversalClient) int64 {
	return int64(redisInfo(b, client, "memory", "used_memory"))
}

// benchBackends are the Redis setups of the fleet benchmarks.
func benchBackends() []struct {
	name  string
	start func(b *testing.B) redis.UniversalClient
} {
	return []struct {
		name  string
		start func(b *testing.B) redis.UniversalClient
	}{
		{"single", func(b *testing.B) redis.UniversalClient { return redistest.Start(b).Client() }},
		{"cluster", func(b *testing.B) redis.UniversalClient { return redistest.StartCluster(b).Client() }},
	}
}

// BenchmarkFrontierRoundTrips crawls 2,000 pages on 50 hosts, 20 links a
// page, with one member, and counts what the member's client sends to
// Redis per page fetched: round trips (a pipeline is one) and commands,
// and Redis's CPU time per page.
func BenchmarkFrontierRoundTrips(b *testing.B) {
	for _, be := range benchBackends() {
		b.Run(be.name, func(b *testing.B) {
			client := be.start(b)
			counter := &commandCounter{n: map[string]int64{}}
			client.AddHook(counter)
			tr := linkWeb(b, 2000, 50, 20, 0)
			for i := 0; i < b.N; i++ {
				f := New(client)
				f.Prefix = fmt.Sprintf("bench:%s:%d", b.Name(), i)
				counter.reset()
				cpu := redisCPU(b, client)
				var fetched atomic.Int64
				if err := crawlWeb(f, tr, 1000, 8, &fetched); err != nil {
					b.Fatal(err)
				}
				cpu = redisCPU(b, client) - cpu
				f.Close()
				n := counter.reset()
				pages := float64(fetched.Load())
				if pages < 2000 {
					b.Fatalf("fetched %v pages, want 2000", pages)
				}
				var rt, cmds int64
				for name, k := range n {
					switch name {
					case "pipeline":
						rt += k
					case "pipelined":
						cmds += k
					default:
						rt += k
						cmds += k
					}
				}
				b.ReportMetric(float64(rt)/pages, "rt/page")
				// The frontier's and the Guard's: without robots.txt, read
				// once per host and then kept in memory.
				robots := n["get"] + n["set"] + n["hget"] + n["eval"] + n["evalsha"]
				setup := n["hello"] + n["client"] + n["info"]
				b.ReportMetric(float64(rt-robots-setup)/pages, "frontier+guard-rt/page")
				b.ReportMetric(float64(cmds)/pages, "cmds/page")
				b.ReportMetric(cpu/pages*1e6, "redis-µs/page")
				b.Logf("round trips by command: %v", n)
			}
		})
	}
}

// BenchmarkFleetHosts crawls 2,000 pages on 1,000 hosts (6 links a page,
// 100 ms a page, like a remote server) with 1, 2 and 4 members, each its
// own client, Fleet, Guard, collector and 8 queue threads, and reports
// pages per second. The Guard's rate, 50 per second per host, is not the
// limit: one member's threads are.
func BenchmarkFleetHosts(b *testing.B) {
	for _, be := range benchBackends() {
		for _, members := range []int{1, 2, 4} {
			b.Run(fmt.Sprintf("%s/members=%d", be.name, members), func(b *testing.B) {
				client := be.start(b)
				const pages = 2000
				tr := linkWeb(b, pages, 1000, 6, 100*time.Millisecond)
				for i := 0; i < b.N; i++ {
					prefix := fmt.Sprintf("bench:%s:%d", b.Name(), i)
					var fetched atomic.Int64
					var wg sync.WaitGroup
					start := time.Now()
					for range members {
						wg.Add(1)
						go func() {
							defer wg.Done()
							f := New(client)
							f.Prefix = prefix
							defer f.Close()
							if err := crawlWeb(f, tr, 50, 8, &fetched); err != nil {
								b.Error(err)
							}
						}()
					}
					wg.Wait()
					if got := fetched.Load(); got != pages {
						b.Fatalf("fetched %d pages, want %d", got, pages)
					}
					b.ReportMetric(pages/time.Since(start).Seconds(), "pages/s")
				}
			})
		}
	}
}

// BenchmarkQueueMemory queues 100,000 URLs (1,000 hosts, 100 paths each,
// like http://h123.test/section/page-45.html) and reports Redis's memory
// per queued URL: its queue entry and its seen id together.
func BenchmarkQueueMemory(b *testing.B) {
	for _, be := range benchBackends() {
		b.Run(be.name, func(b *testing.B) {
			client := be.start(b)
			const hosts, paths = 1000, 100
			for i := 0; i < b.N; i++ {
				f := New(client)
				f.Prefix = fmt.Sprintf("bench:%d", i)
				f.init()
				before := redisMemory(b, client)
				for h := 0; h < hosts; h++ {
					for p := 0; p < paths; p++ {
						a, err := f.encode(serial(b, fmt.Sprintf("http://h%d.test/section/page-%d.html", h, p)))
						if err != nil {
							b.Fatal(err)
						}
						f.front.adds = append(f.front.adds, a)
					}
					if err := f.front.commit(context.Background(), false); err != nil {
						b.Fatal(err)
					}
				}
				st, err := f.Stats(context.Background())
				if err != nil || st.Queued != hosts*paths {
					b.Fatalf("Stats = %+v, %v", st, err)
				}
				b.ReportMetric(float64(redisMemory(b, client)-before)/(hosts*paths), "B/url")
				f.Close()
			}
		})
	}
}
