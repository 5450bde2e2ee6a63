// Command fleet is one member of a fleet of crawlers that share one Redis:
// run it several times, on one machine or many, and together they crawl
// the site of START_URL (links on the same host) as one polite crawler
// would.
//
//	go run ./examples/fleet                      # offline: 3 members crawl an embedded demo site
//	go run ./examples/fleet -redis 127.0.0.1:6379 -rate 2 -agent FleetBot https://example.com/
//	go run ./examples/fleet -redis rediss://user:pass@redis.example:6380/2 ... https://example.com/
//	go run ./examples/fleet -redis 127.0.0.1:6379 -stats https://example.com/
//
// What the members share, through package redisstore:
//   - robots.txt: one fetch per origin per expiry for the whole fleet;
//   - each host's schedule (-rate is the fleet's rate per host, not each
//     member's), its pauses (one member's 503 + Retry-After pauses all)
//     and its rate cuts;
//   - the frontier: each URL is queued once, in its host's queue, and
//     fetched by one member; a killed member's pages go to the others.
//
// Each member exits 0 once the shared queue is empty and no member holds
// a page, and prints what it did. It exits 1 if the crawl's state in
// Redis was lost under it (Redis restarted without its data, or another
// crawl replaced it), or if the server is not Redis. With -clear it first
// removes the state of an earlier crawl under the same -prefix (use it on
// one member only, before the others start). -stats prints the fleet's
// counts kept in Redis and exits. If Redis stops answering, the members
// pause (-slow: go on alone, each at a fraction of the rate) and resume
// when it is back; a full Redis (maxmemory reached under noeviction) is
// met the same way: the members pause, say so, and resume once it takes
// writes again. -redis takes host:port or a redis:// or rediss:// URL
// (user, password, database, TLS).
// -v prints each page and the Guard's and the fleet's log (log/slog) on
// stderr; -metrics ADDR serves this member's Guard Stats for Prometheus on
// http://ADDR/metrics.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/examples/internal/cmdline"
	"github.com/robotsmw/robotsmw/internal/promtext"
	robotsmw "github.com/robotsmw/robotsmw/middleware"
	"github.com/robotsmw/robotsmw/netguard"
	"github.com/robotsmw/robotsmw/redisstore"
)

func main() {
	// go-redis logs failed dials itself; this program reports Redis's
	// state through Fleet.OnDown instead.
	redis.SetLogger(quiet{})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole program; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := cmdline.New("fleet", "[flags] [START_URL]", `Crawls the site of START_URL (links on its host) as one member of a fleet
sharing one Redis. Run it several times at once; each exits when the
shared queue is drained. Without START_URL it crawls an embedded demo site
on 127.0.0.1 with -members members in this one process, offline (Redis
still needed: redis-server --port 6379 --save "" --daemonize yes).`)
	addr := flags.String("redis", "127.0.0.1:6379", "Redis address: host:port, or a redis:// or rediss:// URL with user, password and database")
	perHost := flags.Float64("rate", 1, "requests per second per host, for the whole fleet")
	agent := flags.String("agent", "FleetBot", "user agent product token, matched against robots.txt")
	prefix := flags.String("prefix", "", "key prefix of the crawl's shared state (default: fleet:HOST of START_URL)")
	polite := flags.String("politeness", "", "key prefix of robots.txt and pacing, to share one pacing of each host between crawls (default: -prefix)")
	showStats := flags.Bool("stats", false, "print the fleet's counts kept in Redis and exit")
	threads := flags.Int("threads", 4, "queue threads of this member")
	slow := flags.Bool("slow", false, "while Redis is down, go on alone at the rate divided by the members (default: pause)")
	clear := flags.Bool("clear", false, "remove the shared state of an earlier crawl under the prefix first")
	verbose := flags.Bool("v", false, "print every page fetched, and the Guard's and the fleet's log (log/slog) on stderr")
	metrics := flags.String("metrics", "", "serve this member's Guard Stats for Prometheus on `ADDR`/metrics (e.g. 127.0.0.1:9100)")
	allowPrivate := flags.Bool("allow-private", false, "reach loopback, private and link-local addresses other than the site's own address and port (refused by default: netguard)")
	members := flags.Int("members", 3, "members of the demo crawl, without START_URL")
	if code := flags.Parse(args, 1, stdout, stderr); code >= 0 {
		return code
	}
	if flags.NArg() == 0 {
		if *members < 1 || *members > 16 {
			return flags.UsageError(stderr, errors.New("-members must be 1 to 16"))
		}
		if *showStats {
			return flags.UsageError(stderr, errors.New("-stats needs the START_URL of the crawl"))
		}
		return demo(ctx, args, *members, stdout, stderr)
	}
	start, err := url.Parse(flags.Arg(0))
	if err != nil || (start.Scheme != "http" && start.Scheme != "https") || start.Host == "" {
		fmt.Fprintf(stderr, "fleet: START_URL %q is not an http or https URL\n", flags.Arg(0))
		return 2
	}
	if *perHost <= 0 || *threads <= 0 {
		fmt.Fprintln(stderr, "fleet: -rate and -threads must be positive")
		return 2
	}

	out := &printer{w: stdout, start: time.Now()}
	opts := &redis.Options{Addr: *addr}
	if strings.Contains(*addr, "://") {
		if opts, err = redis.ParseURL(*addr); err != nil {
			fmt.Fprintf(stderr, "fleet: -redis: %v\n", err)
			return 2
		}
	}
	opts.DialTimeout, opts.MaxRetries = time.Second, -1
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err = rdb.Ping(pctx).Err()
	cancel()
	var netErr net.Error
	var redisErr redis.Error
	switch {
	case err == nil:
	case errors.As(err, &redisErr):
		// Redis answered with an error: a wrong password, an ACL.
		fmt.Fprintf(stderr, "fleet: Redis at %s refused: %v\n", opts.Addr, err)
		return 2
	case errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.EOF):
		fmt.Fprintf(stderr, "fleet: Redis at %s does not answer: %v\n(start one with: redis-server --port 6379 --save \"\" --daemonize yes)\n", opts.Addr, err)
		return 2
	default:
		// An answer, but not in Redis's protocol.
		fmt.Fprintf(stderr, "fleet: %s is not a Redis server: %v\n", opts.Addr, err)
		return 1
	}

	var logger *slog.Logger
	if *verbose {
		logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	fleet := redisstore.New(rdb)
	fleet.Logger = logger
	fleet.Prefix = *prefix
	if fleet.Prefix == "" {
		fleet.Prefix = "fleet:" + start.Host
	}
	fleet.Politeness = *polite
	if *showStats {
		st, err := fleet.Stats(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "fleet: %v\n", err)
			return 1
		}
		printStats(stdout, fleet.Prefix, st)
		return 0
	}
	if *slow {
		fleet.WhenDown = redisstore.Slow
	}
	fleet.OnDown = func(err error) {
		switch {
		case errors.Is(err, redisstore.ErrFull):
			out.stamp("Redis is full (maxmemory, noeviction), pausing until it takes writes again: raise its maxmemory (CONFIG SET maxmemory) or free memory: %v", err)
		case err != nil && *slow:
			out.stamp("Redis unreachable, going on alone, slower: %v", err)
		case err != nil:
			out.stamp("Redis unreachable, pausing: %v", err)
		default:
			out.stamp("Redis is back, resuming")
		}
	}
	defer fleet.Close()
	if *clear {
		if err := fleet.Clear(ctx); err != nil {
			fmt.Fprintf(stderr, "fleet: clearing %s: %v\n", fleet.Prefix, err)
			return 1
		}
	}

	q, err := queue.New(*threads, fleet.Queue())
	if err != nil {
		fmt.Fprintf(stderr, "fleet: %v\n", err)
		return 1
	}
	g := &robotsmw.Guard{
		Agent: *agent,
		Rate:  rate.Limit(*perHost),
		// A queue thread waits at most this for its host; a longer wait
		// is deferred and frees the thread.
		MaxWait: 5 * time.Second,
		Links:   robotsmw.Links{Queue: fleet.Queue()},
		Logger:  logger,
		ErrorHandler: func(r *colly.Request, err error) {
			var dis *robotsmw.DisallowedError
			var nf *robotsmw.NotFollowedError
			switch {
			case errors.As(err, &dis):
				out.stamp("blocked  %s: %s", r.URL, dis.Decision)
			case errors.As(err, &nf):
				// rel="nofollow" and nofollow pages: counted in Stats.
			default:
				out.stamp("failed   %s: %s", r.URL, cmdline.ErrorText(err, r.URL))
			}
		},
	}
	fleet.Attach(g) // shared robots.txt records and per-host pacing
	if *metrics != "" {
		url, stop, err := promtext.Serve(*metrics, g.Stats)
		if err != nil {
			fmt.Fprintf(stderr, "fleet: %v\n", err)
			return 2
		}
		defer stop()
		out.stamp("metrics on %s", url)
	}

	// A site's robots.txt, sitemaps, redirects and links may name any
	// address: the crawl reaches the site's own (on its port) and public ones only.
	var dial colly.CollectorOption = func(*colly.Collector) {}
	if !*allowPrivate {
		tr, err := netguard.SiteTransport(ctx, start.String())
		if err != nil {
			fmt.Fprintf(stderr, "fleet: %v\n", err)
			return 2
		}
		dial = func(c *colly.Collector) { c.WithTransport(tr) }
	}
	c := colly.NewCollector(
		colly.UserAgent(*agent+"/1.0"),
		colly.StdlibContext(ctx),
		colly.AllowedDomains(start.Hostname()),
		dial, // before the Guard, which wraps the transport it finds
		g.Attach,
	)
	if err := c.SetStorage(fleet.Storage()); err != nil { // shared visited set
		fmt.Fprintf(stderr, "fleet: %v\n", err)
		return 1
	}
	g.FollowLinks(c) // same-host links go to the shared queue

	var mu sync.Mutex
	pages := 0
	c.OnResponse(func(r *colly.Response) {
		mu.Lock()
		pages++
		mu.Unlock()
		if *verbose {
			out.stamp("fetched  %s (%d)", r.Request.URL, r.StatusCode)
		}
	})
	c.OnError(func(r *colly.Response, err error) {
		var de *robotsmw.DeferredError
		switch {
		case errors.As(err, &de):
			if *verbose {
				out.stamp("later    %s in %.1fs: %v", r.Request.URL, time.Until(de.Until).Seconds(), de.Err)
			}
		case !robotsmw.IsFinal(err):
		case r.StatusCode != 0:
			out.stamp("status   %s: %d", r.Request.URL, r.StatusCode)
		}
	})

	before, err := fleet.Stats(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "fleet: %v\n", err)
		return 1
	}
	// The crawl under the prefix was complete before this member started:
	// pages fetched, none queued or held.
	done := before.Epoch != "" && before.Fetched > 0 && before.Queued == 0 && before.InFlight == 0
	// Every member adds the start URL; the frontier queues it once.
	if err := q.AddURL(start.String()); err != nil {
		fmt.Fprintf(stderr, "fleet: %v\n", err)
		return 1
	}
	// Ctrl-C: Run stops taking requests and waits for those under way;
	// while Redis is down it waits for Redis, so close the Fleet after a
	// grace period to give up then.
	ran := make(chan struct{})
	defer close(ran)
	go func() {
		select {
		case <-ran:
			return
		case <-ctx.Done():
		}
		select {
		case <-ran:
		case <-time.After(5 * time.Second):
			fleet.Close()
		}
	}()
	out.stamp("member %s crawling %s at %g/s per host for the fleet (prefix %s)", fleet.ID(), start.Host, *perHost, fleet.Prefix)
	if err := fleet.Run(ctx, q, c); err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "fleet: %v\n", err)
		return 1
	}

	t := g.Stats().Total
	mu.Lock()
	n := pages
	mu.Unlock()
	end := "drained"
	if ctx.Err() != nil {
		end = "interrupted"
	}
	out.stamp("%s: this member fetched %d pages; requests sent %d (robots.txt included), blocked %d, deferred %d, retried %d, back-offs %d, gave up %d, links not followed %d",
		end, n, t.Sent, t.Blocked, t.Deferred, t.Retried, t.Backoffs, t.GaveUp, t.NotFollowed)
	if n == 0 && done {
		out.stamp("nothing was fetched: the crawl under the prefix %q was already complete when this member started (%d pages fetched); run one member with -clear to crawl again", fleet.Prefix, before.Fetched)
	}
	if st, err := fleet.Stats(ctx); err == nil {
		out.stamp("fleet: fetched %d, blocked %d, gave up %d, deferred %d, queued %d, in flight %d, duplicates dropped %d, given back %d",
			st.Fetched, st.Blocked, st.GaveUp, st.Deferred, st.Queued, st.InFlight, st.Duplicates, st.Returned)
	}
	return flags.Finish(ctx, stderr, cmdline.ExitOK)
}

// printStats prints the fleet's counts.
func printStats(w io.Writer, prefix string, st redisstore.FleetStats) {
	if st.Epoch == "" {
		fmt.Fprintf(w, "no crawl under the prefix %q\n", prefix)
		return
	}
	fmt.Fprintf(w, "crawl %q (epoch %s): %d members live\n", prefix, st.Epoch, st.Members)
	fmt.Fprintf(w, "queued %d, in flight %d, added %d, duplicates dropped %d, refused (queue full) %d\n",
		st.Queued, st.InFlight, st.Added, st.Duplicates, st.Refused)
	fmt.Fprintf(w, "fetched %d, blocked %d, gave up %d, dropped by colly %d, deferred %d, given back from dead members %d\n",
		st.Fetched, st.Blocked, st.GaveUp, st.Dropped, st.Deferred, st.Returned)
	hosts := make([]string, 0, len(st.InFlightByHost))
	for h := range st.InFlightByHost {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		fmt.Fprintf(w, "in flight on %s: %d\n", h, st.InFlightByHost[h])
	}
}

// A printer writes lines stamped with the time since the start; it may be
// used from several goroutines.
type printer struct {
	w     io.Writer
	start time.Time
	mu    sync.Mutex // guards w
}

func (p *printer) stamp(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := fmt.Sprintf(format, args...)
	fmt.Fprintf(p.w, "%6.2fs %s\n", time.Since(p.start).Seconds(), strings.TrimRight(line, "\n"))
}

// quiet is a go-redis logger that drops what it is given.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...interface{}) {}
