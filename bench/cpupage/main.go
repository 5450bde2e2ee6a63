// Command cpupage measures the CPU the Guard costs per page (issue 20):
// 200 loopback hosts × 30 linked pages, each answered in 20 ms, crawled
// by an async colly collector with parallelism 32, bare and with
// robotsmw.Attach (Rate: rate.Inf; robots.txt fetches included). Each
// crawl runs in a process of its own, and the CPU (user + system) of
// that whole process is read when it exits; the site runs in this
// process, so its CPU is not counted. Bare and guarded runs alternate in
// pairs (the order flips each pair), and the command prints each pair and
// the median ratio, so that the load of other processes on the machine
// affects both alike.
//
//	go run ./cpupage [-pairs 5] [-hosts 200] [-pages 30] [-latency 20ms] [-cpuprofile PREFIX]
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

func main() {
	pairs := flag.Int("pairs", 5, "paired runs")
	hosts := flag.Int("hosts", 200, "hosts")
	pages := flag.Int("pages", 30, "linked pages per host")
	latency := flag.Duration("latency", 20*time.Millisecond, "time the site takes per page")
	child := flag.String("child", "", "internal: crawl as `MODE` (bare or guard) against -addr")
	addr := flag.String("addr", "", "internal: the site's address")
	profile := flag.String("cpuprofile", "", "write a CPU profile of each crawl to `PREFIX`.MODE.PAIR")
	flag.Parse()
	if *child != "" {
		if *profile != "" {
			f, err := os.Create(*profile)
			if err != nil {
				fmt.Fprintln(os.Stderr, "cpupage:", err)
				os.Exit(1)
			}
			pprof.StartCPUProfile(f)
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
		n := crawl(*child, *addr, *hosts)
		fmt.Println(n)
		return
	}
	var served atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
			return
		}
		served.Add(1)
		time.Sleep(*latency)
		i, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p"))
		fmt.Fprint(w, "<html><head><title>page</title></head><body><p>A page.</p>")
		if i+1 < *pages {
			fmt.Fprintf(w, `<a href="/p%d">next</a>`, i+1)
		}
		fmt.Fprint(w, "</body></html>")
	}))
	defer site.Close()
	addrOf := strings.TrimPrefix(site.URL, "http://")
	var ratios []float64
	for p := 0; p < *pairs; p++ {
		order := []string{"bare", "guard"}
		if p%2 == 1 {
			order = []string{"guard", "bare"}
		}
		cpu := map[string]time.Duration{}
		for _, mode := range order {
			served.Store(0)
			prof := ""
			if *profile != "" {
				prof = fmt.Sprintf("%s.%s.%d", *profile, mode, p+1)
			}
			d, err := run(mode, addrOf, *hosts, prof)
			if err != nil {
				fmt.Fprintln(os.Stderr, "cpupage:", err)
				os.Exit(1)
			}
			if got, want := served.Load(), int64(*hosts**pages); got != want {
				fmt.Fprintf(os.Stderr, "cpupage: %s crawl fetched %d pages, want %d\n", mode, got, want)
				os.Exit(1)
			}
			cpu[mode] = d
		}
		r := cpu["guard"].Seconds() / cpu["bare"].Seconds()
		ratios = append(ratios, r)
		n := float64(*hosts * *pages)
		fmt.Printf("pair %d: bare %.0f µs/page, guarded %.0f µs/page, %+.1f %%\n", p+1,
			cpu["bare"].Seconds()*1e6/n, cpu["guard"].Seconds()*1e6/n, 100*(r-1))
	}
	sort.Float64s(ratios)
	fmt.Printf("median CPU over bare colly: %+.1f %% (%d pairs)\n", 100*(ratios[len(ratios)/2]-1), len(ratios))
}

// run crawls in a child process and returns its CPU time.
func run(mode, addr string, hosts int, profile string) (time.Duration, error) {
	cmd := exec.Command(os.Args[0], "-child", mode, "-addr", addr, "-hosts", strconv.Itoa(hosts), "-cpuprofile", profile)
	cmd.Stderr = os.Stderr
	if _, err := cmd.Output(); err != nil {
		return 0, fmt.Errorf("%s crawl: %w", mode, err)
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// crawl crawls every host's pages from /p0 and returns the pages scraped.
func crawl(mode, addr string, hosts int) int64 {
	var d net.Dialer
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr) // every host name is the loopback site
		},
		MaxIdleConnsPerHost: 2,
	}
	opts := []colly.CollectorOption{colly.Async()}
	c := colly.NewCollector(opts...)
	c.WithTransport(tr)
	if mode == "guard" {
		(&robotsmw.Guard{Rate: rate.Inf}).Attach(c)
	}
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 32})
	var scraped atomic.Int64
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { e.Request.Visit(e.Attr("href")) })
	c.OnScraped(func(*colly.Response) { scraped.Add(1) })
	for i := 0; i < hosts; i++ {
		c.Visit(fmt.Sprintf("http://h%03d.test/p0", i))
	}
	c.Wait()
	return scraped.Load()
}
