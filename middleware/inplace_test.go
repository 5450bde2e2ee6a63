package robotsmw

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"
)

// goroutineID returns the id of the calling goroutine, as runtime.Stack
// names it ("goroutine 7 [running]:").
func goroutineID(t *testing.T) int {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	f := bytes.Fields(buf)
	if len(f) < 2 || string(f[0]) != "goroutine" {
		t.Fatalf("runtime.Stack begins %q, want \"goroutine N\"", buf)
	}
	id, err := strconv.Atoi(string(f[1]))
	if err != nil {
		t.Fatalf("runtime.Stack begins %q: %v", buf, err)
	}
	return id
}

// A synchronous collector keeps colly's contract: every callback runs on
// the goroutine inside Visit, one at a time, whatever the Guard does to a
// request — waits beyond MaxWait for a host's pacing, retries after a 503
// with Retry-After and after a 500's back-off, a body cut short, a
// redirect — so callback state needs no lock (this test's has none: -race
// checks it). Every URL gets exactly one final outcome (OnResponse, or a
// final error in OnError), each failed attempt reaches OnError first, in
// order, and the Guard's deferral queue is never used.
func TestSyncCrawlStaysOnCallersGoroutine(t *testing.T) {
	var retry, backoff, cut atomic.Int32
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		paced := strings.HasPrefix(r.Host, "localhost:")
		switch p := r.URL.Path; {
		case p == "/robots.txt" && paced:
			// Pacing beyond MaxWait: deferred, were the collector async.
			w.Write([]byte("User-agent: *\nCrawl-delay: 0.3\n"))
		case p == "/robots.txt":
			w.Write([]byte("User-agent: *\nAllow: /\n"))
		case p == "/start":
			w.Header().Set("Content-Type", "text/html")
			var b strings.Builder
			b.WriteString("<html><body>")
			for _, l := range []string{"/retry", "/backoff", "/cut", "/redir", "/gone"} {
				fmt.Fprintf(&b, `<a href="%s">x</a>`, l)
			}
			for i := 1; i <= 3; i++ {
				fmt.Fprintf(&b, `<a href="http://localhost:%s/paced%d">x</a>`, r.Host[strings.LastIndexByte(r.Host, ':')+1:], i)
			}
			b.WriteString("</body></html>")
			w.Write([]byte(b.String()))
		case p == "/retry" && retry.Add(1) == 1:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		case p == "/backoff" && backoff.Add(1) == 1:
			w.WriteHeader(http.StatusInternalServerError)
		case p == "/cut" && cut.Add(1) == 1:
			// The body ends short of its length: net/http closes the
			// connection once the handler returns.
			w.Header().Set("Content-Length", "100")
			w.Write([]byte("partial"))
		case p == "/redir":
			http.Redirect(w, r, "/target", http.StatusFound)
		case p == "/gone":
			w.WriteHeader(http.StatusBadGateway)
		default:
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("ok"))
		}
	})
	g := &Guard{Rate: rate.Inf, Backoff: 20 * time.Millisecond, MaxRetries: 1, MaxWait: 50 * time.Millisecond}
	c := colly.NewCollector(g.Attach)
	me := goroutineID(t)

	// Callback state, unsynchronised on purpose.
	var (
		visited   []string             // OnRequest, by original path
		fetched   []string             // OnResponse, by original path
		finals    []string             // a final error in OnError, by original path
		attempts  = map[string][]int{} // failed attempts reported to OnError
		links     []string
		elsewhere []string // callbacks that ran on another goroutine
		queued    int      // the most the Guard's deferral queue held
	)
	check := func(what string) {
		if id := goroutineID(t); id != me {
			elsewhere = append(elsewhere, fmt.Sprintf("%s on goroutine %d", what, id))
		}
		queued = max(queued, g.later.len())
	}
	orig := func(r *colly.Request) string { return r.Ctx.Get("orig") }
	c.OnRequest(func(r *colly.Request) {
		check("OnRequest " + r.URL.Path)
		r.Ctx.Put("orig", r.URL.Path)
		visited = append(visited, r.URL.Path)
	})
	c.OnResponse(func(r *colly.Response) {
		check("OnResponse " + orig(r.Request))
		fetched = append(fetched, orig(r.Request))
	})
	c.OnError(func(r *colly.Response, err error) {
		check("OnError " + orig(r.Request))
		var de *DeferredError
		switch {
		case errors.As(err, &de):
			attempts[orig(r.Request)] = append(attempts[orig(r.Request)], de.Attempt)
		default:
			finals = append(finals, orig(r.Request))
		}
	})
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		check("OnHTML " + orig(e.Request))
		links = append(links, e.Attr("href"))
		e.Request.Visit(e.Attr("href"))
	})

	if err := c.Visit(s.URL + "/start"); err != nil {
		t.Fatalf("Visit(/start) = %v, want nil", err)
	}
	c.Wait()

	if len(elsewhere) != 0 {
		t.Errorf("callbacks ran off Visit's goroutine %d: %v", me, elsewhere)
	}
	if len(links) != 8 {
		t.Errorf("OnHTML saw %d links, want 8", len(links))
	}
	// One final outcome per URL: fetched, or a final error.
	outcomes := map[string]int{}
	for _, p := range append(append([]string(nil), fetched...), finals...) {
		outcomes[p]++
	}
	wantFetched := []string{"/backoff", "/cut", "/paced1", "/paced2", "/paced3", "/redir", "/retry", "/start"}
	sort.Strings(fetched)
	if fmt.Sprint(fetched) != fmt.Sprint(wantFetched) {
		t.Errorf("OnResponse for %v, want %v", fetched, wantFetched)
	}
	if fmt.Sprint(finals) != "[/gone]" {
		t.Errorf("final errors in OnError for %v, want [/gone]", finals)
	}
	if len(visited) != 9 {
		t.Errorf("OnRequest for %v, want 9 requests", visited)
	}
	for _, p := range visited {
		if outcomes[p] != 1 {
			t.Errorf("%s has %d final outcomes, want 1", p, outcomes[p])
		}
	}
	// Each failed attempt reached OnError, in order, before the final
	// outcome.
	for p, want := range map[string]string{"/retry": "[1]", "/backoff": "[1]", "/cut": "[1]", "/gone": "[1]"} {
		if got := fmt.Sprint(attempts[p]); got != want {
			t.Errorf("OnError got the failed attempts %s of %s, want %s", got, p, want)
		}
	}
	if len(attempts) != 4 {
		t.Errorf("OnError got failed attempts for %v, want /retry, /backoff, /cut and /gone only", attempts)
	}
	if n := s.count("/target"); n != 1 {
		t.Errorf("/target fetched %d times, want 1", n)
	}
	// The paced host was paced: its pages came at least its Crawl-delay
	// apart, waited for in place.
	var paced []time.Time
	for _, h := range s.log() {
		if strings.HasPrefix(h.path, "/paced") {
			paced = append(paced, h.at)
		}
	}
	for i := 1; i < len(paced); i++ {
		if gap := paced[i].Sub(paced[i-1]); gap < 300*time.Millisecond {
			t.Errorf("paced page %d came %v after the one before, want ≥ 300ms (Crawl-delay)", i+1, gap)
		}
	}
	q := &g.later
	q.mu.Lock()
	used := q.running || q.sem != nil || len(q.items) > 0
	q.mu.Unlock()
	if used || queued != 0 {
		t.Errorf("the Guard's deferral queue was used (held up to %d requests)", queued)
	}
	if st := g.Stats(); st.Total.Deferred != 0 || st.Waiting != 0 {
		t.Errorf("Stats: Deferred %d, Waiting %d; want 0: a synchronous collector waits in place", st.Total.Deferred, st.Waiting)
	}
}

// A synchronous request whose body cannot be read again (no GetBody) is not
// sent again after a failed attempt: its outcome is final at once, as
// colly's Request.Retry would refuse it, and the host's place it held is
// given back.
func TestSyncRetryBodyUnseekable(t *testing.T) {
	var posts atomic.Int32
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/form" && posts.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}
		return false
	}))
	g := &Guard{Rate: rate.Inf, Backoff: 50 * time.Millisecond}
	c := colly.NewCollector()
	g.Attach(c)
	var err error
	waitOrFail(t, "Request(POST /form)", func() {
		err = c.Request("POST", s.URL+"/form", io.MultiReader(strings.NewReader("a=1")), nil, nil)
	})
	if !errors.Is(err, ErrGaveUp) || !errors.Is(err, colly.ErrRetryBodyUnseekable) {
		t.Errorf("Request(POST /form) with an io.MultiReader body, answered 503 = %v, want ErrGaveUp wrapping colly.ErrRetryBodyUnseekable", err)
	}
	if n := s.count("/form"); n != 1 {
		t.Errorf("server saw /form %d times, want 1", n)
	}
	waitOrFail(t, "Visit(/next)", func() { err = c.Visit(s.URL + "/next") })
	if err != nil {
		t.Errorf("Visit(/next) after it = %v, want nil (the host's place given back)", err)
	}
}

// A synchronous collector's OnError may visit, as colly's users do, under a
// LimitRule: a failed attempt is retried in place inside colly's client,
// which holds the rule's slot, and reaches OnError once the client
// returned, before the request's final outcome.
func TestSyncOnErrorVisitsUnderLimitRule(t *testing.T) {
	var flaky atomic.Int32
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		switch {
		case r.URL.Path == "/flaky" && flaky.Add(1) == 1, r.URL.Path == "/gone":
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}
		return false
	}))
	g := &Guard{Rate: rate.Inf, Backoff: 50 * time.Millisecond, MaxRetries: 1}
	c := colly.NewCollector()
	g.Attach(c)
	c.Limit(&colly.LimitRule{DomainGlob: "*", Delay: 10 * time.Millisecond})
	var onError, events []string
	c.OnError(func(r *colly.Response, err error) {
		onError = append(onError, r.Request.URL.Path)
		events = append(events, "error "+r.Request.URL.Path)
		r.Request.Visit("/fallback" + r.Request.URL.Path)
	})
	c.OnResponse(func(r *colly.Response) { events = append(events, "ok "+r.Request.URL.Path) })
	var err error
	waitOrFail(t, "Visit(/flaky)", func() { err = c.Visit(s.URL + "/flaky") })
	if err != nil {
		t.Errorf("Visit(/flaky), answered 503 once = %v, want nil", err)
	}
	waitOrFail(t, "Visit(/gone)", func() { err = c.Visit(s.URL + "/gone") })
	if !errors.Is(err, ErrGaveUp) {
		t.Errorf("Visit(/gone), answered 503 always = %v, want ErrGaveUp", err)
	}
	if fmt.Sprint(onError) != "[/flaky /gone /gone]" {
		t.Errorf("OnError saw %v, want [/flaky /gone /gone] (a retried attempt of each, then /gone's final outcome)", onError)
	}
	for _, p := range []string{"/fallback/flaky", "/fallback/gone"} {
		if n := s.count(p); n != 1 {
			t.Errorf("OnError's Visit(%s) reached the server %d times, want 1", p, n)
		}
	}
	// The attempt is told before the response that followed it, and
	// nothing of either request is kept once it is told.
	if want := "[error /flaky ok /fallback/flaky ok /flaky"; !strings.HasPrefix(fmt.Sprint(events), want) {
		t.Errorf("callbacks ran %v, want them to begin %s …]", events, want)
	}
	if n := g.visits.count(); n != 0 {
		t.Errorf("%d visits indexed after the crawl, want 0", n)
	}
}

// A synchronous collector's redirect hop waits for its host beyond
// MaxWait also when the client has a Timeout of its own (set after
// Attach): only that timeout bounds it.
func TestSyncHopWaitsBeyondMaxWaitUnderClientTimeout(t *testing.T) {
	s := newSite(t, robots("User-agent: *\nCrawl-delay: 0.3\n", func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/redir" {
			http.Redirect(w, r, "/target", http.StatusFound)
			return true
		}
		return false
	}))
	g := &Guard{MaxWait: 50 * time.Millisecond}
	c := colly.NewCollector()
	g.Attach(c)
	c.SetRequestTimeout(5 * time.Second)
	var err error
	waitOrFail(t, "Visit(/first), Visit(/redir)", func() {
		if err = c.Visit(s.URL + "/first"); err == nil {
			err = c.Visit(s.URL + "/redir")
		}
	})
	if err != nil {
		t.Errorf("Visit(/redir) to /target, 0.3 s of Crawl-delay away with MaxWait 50 ms and a 5 s client timeout = %v, want nil", err)
	}
	if n := s.count("/target"); n != 1 {
		t.Errorf("server saw /target %d times, want 1", n)
	}
}

// A synchronous collector's failed redirect hop is sent again in place, so
// whether it may be is the hop's method's: a POST's 303 leads to a GET,
// which is retried after a 502.
func TestSyncRetriesGetHopOfPost(t *testing.T) {
	var results atomic.Int32
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		switch r.URL.Path {
		case "/form":
			http.Redirect(w, r, "/result", http.StatusSeeOther)
			return true
		case "/result":
			if results.Add(1) == 1 {
				w.WriteHeader(http.StatusBadGateway)
				return true
			}
		}
		return false
	}))
	g := &Guard{Rate: rate.Inf, Backoff: 50 * time.Millisecond}
	c := colly.NewCollector()
	g.Attach(c)
	var err error
	waitOrFail(t, "Post(/form)", func() { err = c.Post(s.URL+"/form", map[string]string{"a": "1"}) })
	if err != nil {
		t.Errorf("Post(/form) → 303 → GET /result, answered 502 once = %v, want nil", err)
	}
	if f, r := s.count("/form"), s.count("/result"); f != 1 || r != 2 {
		t.Errorf("server saw /form %d and /result %d times, want 1 and 2", f, r)
	}
}
