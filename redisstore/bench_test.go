package redisstore

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
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

// A commandCounter is a go-redis hook that counts the round trips a client
// makes, by command name (a pipeline is one round trip).
type commandCounter struct {
	mu sync.Mutex // guards n
	n  map[string]int64
}

func (c *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		name := cmd.Name()
		if a := cmd.Args(); (name == "evalsha" || name == "eval") && len(a) > 1 {
			switch fmt.Sprint(a[1]) {
			case reserveScript.Hash():
				name = "reserve"
			case visitedClaim.Hash():
				name = "claim"
			case popScript.Hash():
				name = "pop"
			case commitScript.Hash():
				name = "commit"
			case stepScript.Hash():
				name = "step"
			case leaseReleaseScript.Hash():
				name = "release"
			case renewScript.Hash():
				name = "renew"
			case deferScript.Hash():
				name = "defer"
			}
		}
		c.mu.Lock()
		c.n[name]++
		c.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (c *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.mu.Lock()
		c.n["pipeline"]++
		c.n["pipelined"] += int64(len(cmds))
		c.mu.Unlock()
		return next(ctx, cmds)
	}
}

func (c *commandCounter) reset() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int64{}
	return n
}

// manyHosts serves pages for any host name, after delay, and returns a
// transport that sends every host to it: a broad crawl on loopback.
func manyHosts(b *testing.B, delay time.Duration) (*httptest.Server, *http.Transport) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
			return
		}
		time.Sleep(delay)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>page</body></html>")
	}))
	b.Cleanup(s.Close)
	tr := loopback(strings.TrimPrefix(s.URL, "http://"))
	b.Cleanup(tr.CloseIdleConnections)
	return s, tr
}

// loopback returns a transport that sends every host to addr.
func loopback(addr string) *http.Transport {
	return &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
		MaxIdleConnsPerHost: 64,
	}
}

// seedQueue fills the shared queue of the crawl under prefix with pages
// p0… of hosts h0.test….
func seedQueue(client redis.UniversalClient, prefix string, hosts, pages int) {
	seed := New(client)
	seed.Prefix = prefix
	defer seed.Close()
	q, _ := queue.New(1, seed.Queue())
	for p := 0; p < pages; p++ {
		for h := 0; h < hosts; h++ {
			q.AddURL(fmt.Sprintf("http://h%d.test/p%d", h, p))
		}
	}
}

// crawlShared is one member of the throughput measurements: a Guard at
// 50 requests per second per host (not the limit), a collector over tr and
// 4 queue threads, run until the fleet is drained. It counts the pages it
// fetched and stores when the last one arrived (Unix nanoseconds).
func crawlShared(f *Fleet, tr http.RoundTripper, r rate.Limit, fetched, last *atomic.Int64) error {
	g := &robotsmw.Guard{Rate: r}
	f.Attach(g)
	c := colly.NewCollector(func(c *colly.Collector) { c.WithTransport(tr) }, g.Attach)
	if err := c.SetStorage(f.Storage()); err != nil {
		return err
	}
	c.OnResponse(func(*colly.Response) {
		fetched.Add(1)
		last.Store(time.Now().UnixNano())
	})
	q, err := queue.New(4, f.Queue())
	if err != nil {
		return err
	}
	return f.Run(context.Background(), q, c)
}

// BenchmarkRoundTrips counts the Redis round trips per request of a fleet
// member whose robots.txt records are cached locally: the Guard's
// (the rate reservation) and those of colly's shared visited set.
func BenchmarkRoundTrips(b *testing.B) {
	srv := redistest.Start(b)
	client := srv.Client()
	counter := &commandCounter{n: map[string]int64{}}
	client.AddHook(counter)
	_, tr := manyHosts(b, 0)
	const hosts = 50
	f := New(client)
	defer f.Close()
	f.Prefix = "bench:" + b.Name()
	g := &robotsmw.Guard{Rate: rate.Inf}
	f.Attach(g)
	c := colly.NewCollector(func(c *colly.Collector) { c.WithTransport(tr) }, g.Attach, colly.Async())
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8})
	if err := c.SetStorage(f.Storage()); err != nil {
		b.Fatal(err)
	}
	var fetched atomic.Int64
	c.OnResponse(func(*colly.Response) { fetched.Add(1) })
	for h := 0; h < hosts; h++ { // robots.txt of every host, once
		c.Visit(fmt.Sprintf("http://h%d.test/warm", h))
	}
	c.Wait()
	counter.reset()
	fetched.Store(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Visit(fmt.Sprintf("http://h%d.test/p%d", i%hosts, i))
	}
	c.Wait()
	b.StopTimer()
	n := counter.reset()
	if got := fetched.Load(); got != int64(b.N) {
		b.Fatalf("fetched %d pages, want %d", got, b.N)
	}
	var guard, visited, other int64
	for name, k := range n {
		switch name {
		case "reserve":
			guard += k // the reservation script
		case "hexists", "claim":
			visited += k // IsVisited, Visited
		default:
			other += k
		}
	}
	b.ReportMetric(float64(guard)/float64(b.N), "guard-rt/req")
	b.ReportMetric(float64(visited)/float64(b.N), "visited-rt/req")
	b.ReportMetric(float64(other)/float64(b.N), "other-rt/req")
	if other > 0 {
		b.Logf("other commands: %v", n)
	}
}

// BenchmarkFleetThroughput crawls hosts×pages pages from the shared queue
// with 1 and with 3 members (each its own Redis client, Fleet, Guard,
// collector and 4 queue threads), when the per-host rate is not the limit:
// each page takes 20 ms to answer, so one member's threads are. It reports
// pages per second up to the last page, and how long after it the members
// returned from Run.
func BenchmarkFleetThroughput(b *testing.B) {
	for _, members := range []int{1, 3} {
		b.Run(fmt.Sprintf("members=%d", members), func(b *testing.B) {
			srv := redistest.Start(b)
			_, tr := manyHosts(b, 20*time.Millisecond)
			const hosts, pages = 60, 20
			for i := 0; i < b.N; i++ {
				prefix := fmt.Sprintf("bench:%s:%d", b.Name(), i)
				seedQueue(srv.Client(), prefix, hosts, pages)
				start := time.Now()
				var wg sync.WaitGroup
				var fetched, last atomic.Int64 // last: when the last page arrived
				for m := 0; m < members; m++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						f := New(srv.Client())
						f.Prefix = prefix
						defer f.Close()
						if err := crawlShared(f, tr, 50, &fetched, &last); err != nil {
							b.Error(err)
						}
					}()
				}
				wg.Wait()
				drained := time.Since(start)
				if got := fetched.Load(); got != hosts*pages {
					b.Fatalf("fetched %d pages, want %d", got, hosts*pages)
				}
				crawl := time.Unix(0, last.Load()).Sub(start)
				b.ReportMetric(float64(hosts*pages)/crawl.Seconds(), "pages/s")
				// How long after the last page every member saw the fleet
				// drained (idle members poll, 200 ms doubling to 2 s).
				b.ReportMetric((drained - crawl).Seconds(), "drain-s")
			}
		})
	}
}
