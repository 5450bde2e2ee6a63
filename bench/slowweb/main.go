// Command slowweb runs "a slow web" on loopback and judges
// each crawler at the server: 1,000 hosts with 5 linked pages each,
// base latencies drawn from a lognormal spread (median 100 ms, σ 1, within
// 10 ms … 2 s; each request × a lognormal jitter of σ 0.25), every 7th host with
// a Crawl-delay of 2 or 3 s, every 10th host degrading with its load (a
// request that finds n requests in flight, itself included, takes
// base × (1 + 3 × (n − 1)) once n ≥ 2, the knee). Every host name is
// served by one listener on 127.0.0.1, which the crawler's dialer reaches
// whatever the name.
//
// Each crawler runs in a process of its own (the site stays in this
// one), is stopped after -budget, and is judged by what the site saw:
// the most requests in flight at one host, the worst host's p95 latency,
// requests that came sooner than Crawl-delay after the previous response
// to that host ended (or while one was in flight), whether the degrading
// hosts stayed below their knee, and pages per second overall. It prints
// a Markdown table (the README's).
//
// Each Guard row is also set against the bound its own politeness rules
// allow with the Guard's defaults (see Bound): per host, its robots.txt
// and then its pages one at a time, each starting no sooner than
// max(1 s, Crawl-delay) after the previous start (Rate, raised by
// Crawl-delay) nor sooner than the gap after the previous response's end
// (pace.EndGap: Crawl-delay, or with the latency gap the host's smoothed
// response time if longer; guard-fixedpace has no latency gap), every
// response taking the time the site will draw for it, the robots.txt
// fetches in the order the hosts are visited, at most 64 at once
// (Guard.MaxRobotsFetches); slowweb sets no colly Parallelism, so the
// collector adds no cap. A host whose pages are done leaves the crawl, so
// the crawl cannot end before its slowest host does: the bound is the
// pages that crawl answers within D = min(when the slowest host is done,
// -budget), divided by D. The table gives the bound's pages/s and the
// row's pages/s as a share of it (the goal is 90 %; the share is the
// bound's time over the crawl's when both finish). It can pass 100 % by
// a few points: the robots.txt fetches need not start in Visit order,
// and the slowest host's may start sooner than the bound says. The lines
// below the table say when the bound's slowest host starts and is done
// and when the crawl's did, when 95 % of the pages are done in both, and,
// from the requests the site saw, how much later than these rules
// allowed each request came after its host's previous one (and which
// came latest), and when the hosts' first requests came.
//
// The crawlers (-modes) are bare colly with one rule for every host,
// LimitRule{DomainGlob: "*", Parallelism: 2, Delay: 1 s} (colly-star), with per-host rules of Parallelism 2 and Delay 1 s
// (colly-host2), with the Guard's per-host limits by hand (colly-host1,
// colly-host1-robots with colly's robots.txt check, colly-host1-txt
// fetching each host's robots.txt first under the host's rule, as the
// Guard does, and colly-host1-latency with the latency gap by hand too),
// and colly with the Guard (guard-fixedpace, guard). Each Guard row is
// also compared with the bare colly row of its per-host limits:
// guard-fixedpace with colly-host1-txt, guard with colly-host1-latency. To measure another version of the
// Guard, build this directory in a module whose replace points at it and
// run -modes guard -label NAME.
//
//	go run ./slowweb [-hosts 1000] [-pages 5] [-modes colly-star,...,guard] [-budget 45s]
package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

func main() {
	sc := Default
	flag.IntVar(&sc.Hosts, "hosts", sc.Hosts, "hosts")
	flag.IntVar(&sc.Pages, "pages", sc.Pages, "linked pages per host")
	flag.Uint64Var(&sc.Seed, "seed", sc.Seed, "seed of the scenario")
	modes := flag.String("modes", strings.Join(Modes, ","), "crawlers to run, in order")
	label := flag.String("label", "", "name the guard row `NAME` (e.g. the version it was built from)")
	guardLimits := flag.String("guard-limits", limits[Guard], "describe the guard row's per-host limits as `TEXT`")
	budget := flag.Duration("budget", 45*time.Second, "stop each crawl after this long")
	verbose := flag.Bool("v", false, "print each Crawl-delay violation and each page answered twice")
	child := flag.String("child", "", "internal: crawl as `MODE` against -addr")
	addr := flag.String("addr", "", "internal: the site's address")
	flag.Parse()
	if *child != "" {
		scraped, errs, err := Crawl(*child, sc, *addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(scraped, errs)
		return
	}
	if err := run(sc, strings.Split(*modes, ","), *label, *guardLimits, *budget, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(sc Scenario, modes []string, label, guardLimits string, budget time.Duration, verbose bool) error {
	var log io.Writer
	if verbose {
		log = os.Stderr
	}
	site, err := NewSite(sc, log)
	if err != nil {
		return err
	}
	defer site.Close()
	fmt.Printf("%d hosts × %d pages; every %dth host Crawl-delay %v s, every %dth degrades (knee %d in flight)\n\n",
		sc.Hosts, sc.Pages, sc.CrawlDelayEvery, sc.CrawlDelays, sc.DegradeEvery, sc.Knee)
	fmt.Println("| crawler | per-host limits | pages | time | pages/s | requests/s | 95 % of pages in | peak in flight per host | worst host p95 | worst p95 ÷ host's base | Crawl-delay violations | degrading hosts at or over knee (peak) | bound pages/s | pages/s ÷ bound |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	rates := map[string]float64{} // pages/s by row name
	var names []string
	var bounds []string // a line per Guard row
	for _, mode := range modes {
		site.Reset()
		start := time.Now()
		scraped, errs, cut, err := runChild(mode, sc, site.Addr, budget)
		wall := time.Since(start)
		if err != nil {
			return err
		}
		r := site.Result()
		name, lim := mode, limits[mode]
		if mode == Guard {
			name, lim = cmp.Or(label, name), guardLimits
		}
		rates[name] = float64(r.Pages) / wall.Seconds()
		names = append(names, name)
		t := fmt.Sprintf("%.1f s", wall.Seconds())
		if cut {
			t = fmt.Sprintf("stopped at %.0f s", wall.Seconds())
		}
		bcols := "– | –"
		if mode == Guard || mode == GuardFixed {
			b := bound(sc, mode == Guard, budget)
			bcols = fmt.Sprintf("%.1f | %.1f %%", b.PagesPerS, 100*rates[name]/b.PagesPerS)
			first, last := site.Span(b.Slowest)
			bounds = append(bounds, fmt.Sprintf("%s: bound %d pages in %.1f s = %.1f pages/s (its slowest host, %s, from %.2f s to %.2f s, here from %.2f s to %.2f s; 95 %% of pages in %.1f s, here %.1f s); pages/s %.1f %% of it",
				name, b.Pages, b.Within.Seconds(), b.PagesPerS, b.Slowest, b.SlowFirst.Seconds(), b.Full.Seconds(), first.Seconds(), last.Seconds(), b.Pages95.Seconds(), r.Pages95.Seconds(), 100*rates[name]/b.PagesPerS))
			id := site.Idle(mode == Guard)
			bounds = append(bounds, fmt.Sprintf("%s at the site: %d requests after their host's first came %.1f s later in all than the rules allowed (median %.1f ms, p95 %.1f ms, most %.0f ms: %s); hosts' first requests at a median %.2f s, the last at %.2f s; last response at %.1f s",
				name, id.Requests, id.Late.Seconds(), ms(id.LateMed), ms(id.Late95), ms(id.LateMax), id.LateMaxAt, id.FirstMed.Seconds(), id.FirstMax.Seconds(), id.LastTotal.Seconds()))
		}
		fmt.Printf("| %s | %s | %d/%d | %s | %.1f | %.1f | %.1f s | %d | %.2f s | %.1f× | %s | %d of %d (%d) | %s |\n",
			name, lim, r.Pages, sc.Hosts*sc.Pages, t, float64(r.Pages)/wall.Seconds(), float64(r.Requests)/wall.Seconds(), r.Pages95.Seconds(),
			r.PeakInFlight, r.WorstP95.Seconds(), r.WorstSlowdown, violations(r),
			r.DegradeAbove, r.Degrading, r.DegradePeak, bcols)
		if !cut && (scraped != int64(r.Pages) || errs != 0) {
			fmt.Fprintf(os.Stderr, "slowweb: %s: scraped %d, the site answered %d pages, %d errors\n", name, scraped, r.Pages, errs)
		}
	}
	if len(bounds) > 0 {
		fmt.Println()
		for _, l := range bounds {
			fmt.Println(l)
		}
	}
	if bare, ok := rates[CollyHost1]; ok {
		fmt.Println()
		for _, n := range names {
			if n != CollyHost1 {
				fmt.Printf("%s: pages/s %+.1f %% against %s\n", n, 100*(rates[n]/bare-1), CollyHost1)
			}
		}
	}
	for _, mode := range []string{GuardFixed, Guard} {
		n := mode
		if mode == Guard {
			n = cmp.Or(label, n)
		}
		same := sameLimits[mode]
		if r, ok := rates[n]; ok && rates[same] > 0 {
			fmt.Printf("%s: pages/s %+.1f %% against %s (the same per-host limits, robots.txt included)\n", n, 100*(r/rates[same]-1), same)
		}
	}
	return nil
}

// ms returns d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// violations describes r's Crawl-delay violations.
func violations(r Result) string {
	s := fmt.Sprintf("%d of %d", r.Violations, r.CrawlDelayReq)
	if r.Shortfall > 0 {
		s += fmt.Sprintf(" (up to %.3f s early)", r.Shortfall.Seconds())
	}
	return s
}

// limits says what each crawler limits per host.
var limits = map[string]string{
	CollyStar:         "none: 2 in flight and 1 s after each response in all",
	CollyHost2:        "2 in flight, 1 s after each response",
	CollyHost1:        "1 in flight, max(1 s, Crawl-delay) after each response",
	CollyHost1Robots:  "as above, and colly's robots.txt check on",
	CollyHost1Txt:     "1 in flight, max(1 s, Crawl-delay) after each response, robots.txt fetched first under the same rule",
	CollyHost1Latency: "as above, and at least the host's base latency after each response",
	GuardFixed:        "the Guard's defaults with FixedPace: 1 in flight, 1 start/s, Crawl-delay after each response, no latency gap",
	Guard:             "defaults: 1 in flight, 1 start/s, Crawl-delay and the latency gap after each response",
}

// runChild crawls in a child process, stopped after budget.
func runChild(mode string, sc Scenario, addr string, budget time.Duration) (scraped, errs int64, cut bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-child", mode, "-addr", addr,
		"-hosts", strconv.Itoa(sc.Hosts), "-pages", strconv.Itoa(sc.Pages),
		"-seed", strconv.FormatUint(sc.Seed, 10))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return 0, 0, true, nil
	}
	if err != nil {
		return 0, 0, false, fmt.Errorf("slowweb: %s crawl: %w", mode, err)
	}
	sc2 := bufio.NewScanner(strings.NewReader(string(out)))
	if !sc2.Scan() {
		return 0, 0, false, errors.New("slowweb: " + mode + " crawl printed nothing")
	}
	if _, err := fmt.Sscan(sc2.Text(), &scraped, &errs); err != nil {
		return 0, 0, false, fmt.Errorf("slowweb: %s crawl printed %q: %w", mode, sc2.Text(), err)
	}
	return scraped, errs, false, nil
}
