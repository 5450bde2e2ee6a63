package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/robotsmw/robotsmw/directives"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/robotsmw/robotsmw/examples/internal/cmdline"
	robotsmw "github.com/robotsmw/robotsmw/middleware"
	"github.com/robotsmw/robotsmw/sitemap"
)

// A report collects what happened to every URL, from colly's callbacks,
// the Guard's ErrorHandler and the sitemap walk. Its methods are safe for
// concurrent use.
type report struct {
	base  string // stripped from URLs on the demo site
	start time.Time
	event func(string) // prints an event line; nil when events are not shown

	mu        sync.Mutex // guards the fields below
	fetched   []string
	noindex   []string // fetched pages that say noindex
	notFollow []string // links not followed, with the reason
	blocked   []string // URL: the rule and line that blocked it
	backoffs  []string // URL: the reason and the pause
	deferred  int
	gaveUp    []string
	cancelled int      // not sent: Ctrl-C ended the crawl first
	failed    []string // colly's own errors: 404 and the like
	sitemaps  []string
	seed      robotsmw.SeedStats
	seedErr   error
	seeded    bool
	inFlight  int
	lastEvent string
}

// short returns u without the demo site's base.
func (r *report) short(u *url.URL) string {
	s := u.String()
	if r.base != "" {
		if t := strings.TrimPrefix(s, r.base); t != s {
			if t == "" {
				t = "/"
			}
			return t
		}
	}
	return s
}

func (r *report) log(format string, args ...any) {
	line := fmt.Sprintf("%6.2fs ", time.Since(r.start).Seconds()) + fmt.Sprintf(format, args...)
	r.lastEvent = line
	if r.event != nil {
		r.event(line)
	}
}

func (r *report) started() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inFlight++
}

func (r *report) onResponse(resp *colly.Response, d directives.Page) {
	r.mu.Lock()
	defer r.mu.Unlock()
	u := r.short(resp.Request.URL)
	r.fetched = append(r.fetched, u)
	note := ""
	if d.NoIndex {
		r.noindex = append(r.noindex, u)
		note = ", noindex"
	}
	r.log("fetched   %s (%d%s)", u, resp.StatusCode, note)
}

// onFinal is the Guard's ErrorHandler: it records the links FollowLinks
// left out (the other final outcomes reach OnError too).
func (r *report) onFinal(_ *colly.Request, err error) {
	var nf *robotsmw.NotFollowedError
	if !errors.As(err, &nf) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	line := fmt.Sprintf("%s (on %s): %s", r.short(nf.URL), r.short(nf.Page), nf.Reason)
	r.notFollow = append(r.notFollow, line)
	r.log("nofollow  %s", line)
}

func (r *report) onScraped(*colly.Response) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inFlight--
}

// onError sees every failed attempt: a deferral or retry (not final), or a
// final outcome. Final outcomes the Guard decided also reach ErrorHandler;
// this one records them all, so the report sees colly's own too.
func (r *report) onError(resp *colly.Response, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	u := r.short(resp.Request.URL)
	var de *robotsmw.DeferredError
	var dis *robotsmw.DisallowedError
	var se *robotsmw.StatusError
	switch {
	case errors.As(err, &de):
		r.deferred++
		pause := time.Until(de.Until).Round(100 * time.Millisecond)
		if errors.As(de.Err, &se) {
			reason := fmt.Sprintf("%d %s", se.StatusCode, http.StatusText(se.StatusCode))
			if ra := se.Header.Get("Retry-After"); ra != "" {
				reason += ", Retry-After: " + ra
			}
			line := fmt.Sprintf("%s: %s; host paused, retry %d in %v", u, reason, de.Attempt, pause)
			r.backoffs = append(r.backoffs, line)
			r.log("backoff   %s", line)
			return
		}
		r.log("deferred  %s for %v: %v", u, pause, de.Err)
		return
	case errors.As(err, &dis):
		line := fmt.Sprintf("%s: %s", r.short(dis.URL), dis.Decision)
		if dis.URL.String() != resp.Request.URL.String() {
			line += " (redirected from " + u + ")"
		}
		r.blocked = append(r.blocked, line)
		r.log("blocked   %s", line)
	case errors.Is(err, context.Canceled):
		// Ctrl-C: the Guard ends what waited; nothing went wrong with it.
		r.cancelled++
	case errors.Is(err, robotsmw.ErrGaveUp), errors.Is(err, robotsmw.ErrRobotsUnreachable),
		errors.Is(err, robotsmw.ErrCrawlDelayTooLong):
		line := fmt.Sprintf("%s: %s", u, cmdline.ErrorText(err, resp.Request.URL))
		r.gaveUp = append(r.gaveUp, line)
		r.log("gave up   %s", line)
	default:
		line := fmt.Sprintf("%s: %s", u, cmdline.ErrorText(err, resp.Request.URL))
		r.failed = append(r.failed, line)
		r.log("failed    %s", line)
	}
	r.inFlight--
}

// outcome returns the number of pages fetched and of URLs given up.
func (r *report) outcome() (fetched, gaveUp int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.fetched), len(r.gaveUp)
}

// plural returns "1 page", "2 pages".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func (r *report) onSitemap(s sitemap.SitemapReport) {
	r.mu.Lock()
	defer r.mu.Unlock()
	u := s.URL
	if r.base != "" {
		u = strings.TrimPrefix(u, r.base)
	}
	var line string
	switch {
	case s.Disallowed:
		line = u + ": disallowed by robots.txt, not fetched"
	case s.NotModified:
		line = u + ": not modified"
	case s.Index:
		line = fmt.Sprintf("%s: index of %s", u, plural(s.Children, "sitemap"))
	default:
		line = fmt.Sprintf("%s: %s", u, plural(s.Pages, "page"))
	}
	if s.Err != nil {
		line += fmt.Sprintf(" (error: %v)", s.Err)
	}
	r.sitemaps = append(r.sitemaps, line)
	r.log("sitemap   %s", line)
}

func (r *report) seeding(st robotsmw.SeedStats, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seed, r.seedErr, r.seeded = st, err, true
}

// write prints the final report.
func (r *report) write(w io.Writer, g *robotsmw.Guard) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := g.Stats()
	t := st.Total
	fmt.Fprintf(w, "\ndone in %.1fs\n\noutcomes\n", time.Since(r.start).Seconds())
	fmt.Fprintf(w, "  %-44s %4d\n", "pages fetched", len(r.fetched))
	fmt.Fprintf(w, "  %-44s %4d\n", "blocked by robots.txt", len(r.blocked))
	fmt.Fprintf(w, "  %-44s %4d\n", "links not followed (nofollow, -max)", len(r.notFollow))
	fmt.Fprintf(w, "  %-44s %4d\n", "pages that say noindex", len(r.noindex))
	fmt.Fprintf(w, "  %-44s %4d\n", "back-offs (429/503, retried later)", len(r.backoffs))
	fmt.Fprintf(w, "  %-44s %4d\n", "deferrals in all (sent again)", r.deferred)
	fmt.Fprintf(w, "  %-44s %4d\n", "gave up", len(r.gaveUp))
	if r.cancelled > 0 {
		fmt.Fprintf(w, "  %-44s %4d\n", "not sent: crawl interrupted (Ctrl-C)", r.cancelled)
	}
	fmt.Fprintf(w, "  %-44s %4d\n", "other errors (404 and the like)", len(r.failed))
	fmt.Fprintf(w, "  %-44s %4d\n", "requests sent (incl. robots.txt, sitemaps)", t.Sent)

	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s\n", title)
		sorted := append([]string(nil), lines...)
		sort.Strings(sorted)
		for _, l := range sorted {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	section("blocked (the rule and the line that decided)", r.blocked)
	section("links not followed (page or link says nofollow, or over -max)", r.notFollow)
	section("back-offs (reason and pause)", r.backoffs)
	section("gave up", r.gaveUp)
	section("other errors", r.failed)
	if r.seeded && len(r.sitemaps) == 0 && r.seedErr == nil {
		fmt.Fprintf(w, "\nsitemaps\n  none: robots.txt lists none and there is no /sitemap.xml\n")
	} else if r.seeded {
		section("sitemaps read", r.sitemaps)
		s := r.seed
		d := s.Dropped
		fmt.Fprintf(w, "  %s listed: %d handed to the crawl (%d queued, %d reached through links first); left out: %d duplicate, %d disallowed, %d out of scope, %d filtered, %d over -max\n",
			plural(s.URLs+d.Total(), "page URL"), s.Queued+s.Visited, s.Queued, s.Visited,
			d.Duplicate, d.Robots, d.Scope+d.Invalid, d.Filter, d.Limit+s.Rejected)
		if sk := s.Skipped; sk.Total() > 0 {
			fmt.Fprintf(w, "  sitemaps not fetched: %d disallowed, %d seen already, %d out of scope, %d over limits\n",
				sk.Robots, sk.Duplicate, sk.Scope, sk.Limit)
		}
		switch {
		case errors.Is(r.seedErr, context.Canceled):
			fmt.Fprintf(w, "  sitemap walk interrupted (Ctrl-C)\n")
		case r.seedErr != nil:
			fmt.Fprintf(w, "  sitemap errors: %v\n", r.seedErr)
		}
	}
	fmt.Fprintf(w, "\nhosts\n")
	for _, h := range st.Busiest {
		fmt.Fprintf(w, "  %s: %d requests sent, %d pages fetched, %d blocked, %d retried, %d back-offs, interval now %v\n",
			h.Host, h.Sent, h.Pages, h.Blocked, h.Retried, h.Backoffs, h.Interval.Round(time.Millisecond))
	}
}
