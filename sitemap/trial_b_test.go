package sitemap

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/internal/loadsite"
	"github.com/robotsmw/robotsmw/policy"
)

// trialBSite serves robots.txt (robots, then a Sitemap line for
// /index.xml), an index of n sitemaps /s0.xml… and those sitemaps, each
// with one page; every request but robots.txt's takes work.
func trialBSite(t *testing.T, robots string, n int, work time.Duration) *loadsite.Site {
	var base string
	srv := loadsite.New(t, func(*http.Request) time.Duration { return work }, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt":
			fmt.Fprintf(w, "%sSitemap: %s/index.xml\n", robots, base)
		case r.URL.Path == "/index.xml":
			var locs []string
			for i := 0; i < n; i++ {
				locs = append(locs, fmt.Sprintf("%s/s%d.xml", base, i))
			}
			fmt.Fprint(w, indexOf(locs...))
		case strings.HasSuffix(r.URL.Path, ".xml"):
			fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/page%s</loc></url></urlset>`, base, r.URL.Path)
		default:
			http.NotFound(w, r)
		}
	})
	base = srv.URL
	return srv
}

// A Walker over its own robots.txt cache paces every request of a host,
// robots.txt's included, as the server feels it: one in flight, and each
// request, the first sitemap too, at least Crawl-delay after the end of
// the response before.
func TestTrialBWalkerCrawlDelayFromRobots(t *testing.T) {
	const cd = 200 * time.Millisecond
	srv := trialBSite(t, "User-agent: *\nCrawl-delay: 0.2\n", 3, 30*time.Millisecond)
	w := &Walker{Options: Options{Interval: time.Millisecond, Concurrency: 4}}
	n := 0
	if _, err := w.Walk(context.Background(), srv.URL, func(Entry) error { n++; return nil }); err != nil || n != 3 {
		t.Errorf("Walk = %d pages, %v; want 3, nil", n, err)
	}
	peak, spans := srv.Result()
	if peak != 1 || len(spans) != 5 {
		t.Errorf("server saw %d requests, peak in flight %d; want 5 (robots.txt, index, 3 sitemaps), 1", len(spans), peak)
	}
	for i := 1; i < len(spans); i++ {
		if d := spans[i].Start.Sub(spans[i-1].End); d < cd {
			t.Errorf("%s started %v after the end of %s, want ≥ Crawl-delay %v", spans[i].Path, d, spans[i-1].Path, cd)
		}
	}
}

// A host's Crawl-delay longer than Options.Timeout: the walk waits for it
// rather than failing the sitemaps it has not even sent. An operator
// walking a site that asks "Crawl-delay: 60" with the default 30 s
// Timeout expects its sitemaps, not one failure per file.
func TestTrialBWalkerCrawlDelayBeyondTimeout(t *testing.T) {
	const cd = 400 * time.Millisecond
	srv := trialBSite(t, "User-agent: *\nCrawl-delay: 0.4\n", 2, 10*time.Millisecond)
	w := &Walker{Options: Options{Interval: time.Millisecond, Timeout: 250 * time.Millisecond, Retries: -1}}
	n := 0
	st, err := w.Walk(context.Background(), srv.URL, func(Entry) error { n++; return nil })
	if err != nil || n != 2 || st.Failed != 0 {
		t.Errorf("Walk = %d pages, %d failed, %v; want 2, 0, nil", n, st.Failed, err)
	}
	_, spans := srv.Result()
	if len(spans) != 4 {
		t.Errorf("server saw %d requests, want 4 (robots.txt, index, 2 sitemaps)", len(spans))
	}
	for i := 1; i < len(spans); i++ {
		if d := spans[i].Start.Sub(spans[i-1].End); d < cd {
			t.Errorf("%s started %v after the end of %s, want ≥ Crawl-delay %v", spans[i].Path, d, spans[i-1].Path, cd)
		}
	}
}

// A Walker given a robots.txt cache of the caller's (Walker.Robots, over a
// client the Walker does not pace) still counts the host's Crawl-delay
// for the first sitemap from the end of robots.txt's response.
func TestTrialBWalkerOwnCacheFirstSitemap(t *testing.T) {
	const cd = 300 * time.Millisecond
	srv := trialBSite(t, "User-agent: *\nCrawl-delay: 0.3\n", 1, 10*time.Millisecond)
	w := &Walker{Robots: &policy.Cache{Client: srv.Client()}, Options: Options{Interval: time.Millisecond}}
	if _, err := w.Walk(context.Background(), srv.URL, func(Entry) error { return nil }); err != nil {
		t.Errorf("Walk = %v, want nil", err)
	}
	_, spans := srv.Result()
	for i := 1; i < len(spans); i++ {
		if d := spans[i].Start.Sub(spans[i-1].End); d < cd {
			t.Errorf("%s started %v after the end of %s, want ≥ Crawl-delay %v", spans[i].Path, d, spans[i-1].Path, cd)
		}
	}
}

// Ending ctx while the server holds a sitemap's response ends the walk at
// once with ctx's error, and leaves no goroutine behind.
func TestTrialBWalkerCancelNoLeak(t *testing.T) {
	var base string
	arrived := make(chan struct{}, 16)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nSitemap: %s/index.xml\n", base)
		case "/index.xml":
			fmt.Fprint(w, indexOf(base+"/a.xml", base+"/b.xml"))
		default:
			arrived <- struct{}{}
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprint(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>`)
			w.(http.Flusher).Flush()
			select { // a body cut in the middle, held
			case <-r.Context().Done():
			case <-release:
			}
		}
	}))
	base = srv.URL
	defer srv.Close()
	defer close(release)
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	w := &Walker{Client: &http.Client{Transport: tr}, Options: Options{Interval: time.Millisecond, Concurrency: 2}}
	done := make(chan error, 1)
	go func() {
		_, err := w.Walk(ctx, srv.URL, func(Entry) error { return nil })
		done <- err
	}()
	<-arrived
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Walk after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Walk did not return within 3s of its ctx's end")
	}
	tr.CloseIdleConnections()
	var now int
	for i := 0; i < 100; i++ {
		if now = runtime.NumGoroutine(); now <= before {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	buf := make([]byte, 1<<16)
	t.Errorf("%d goroutines after the walk, %d before:\n%s", now, before, buf[:runtime.Stack(buf, true)])
}

// Indexes that list each other and themselves, and a limit on sitemaps:
// the walk ends, each file fetched once, the cut counted.
func TestTrialBWalkerLoopsAndLimit(t *testing.T) {
	var base string
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nSitemap: %s/a.xml\nSitemap: %s/b.xml\n", base, base)
		case "/a.xml":
			fmt.Fprint(w, indexOf(base+"/a.xml", base+"/b.xml", base+"/A.xml?x", base+"/c.xml"))
		case "/b.xml":
			fmt.Fprint(w, indexOf(base+"/a.xml", base+"/b.xml", base+"/a.xml#frag"))
		case "/redir.xml":
			http.Redirect(w, r, base+"/a.xml", http.StatusFound)
		default:
			fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/page%s</loc></url></urlset>`, base, r.URL.Path)
		}
	}))
	defer srv.Close()
	base = srv.URL
	for _, tt := range []struct {
		name        string
		maxSitemaps int
		sitemaps    []string
		wantPages   int
		wantCut     bool
	}{
		{"loops", 0, nil, 2, false},
		{"limit", 2, nil, 0, true},
		{"redirect to a visited index", 0, []string{base + "/a.xml", base + "/redir.xml"}, 2, false},
	} {
		mu.Lock()
		clear(hits)
		mu.Unlock()
		w := &Walker{Options: Options{Interval: time.Millisecond, MaxSitemaps: tt.maxSitemaps, Sitemaps: tt.sitemaps}}
		n := 0
		st, err := w.Walk(context.Background(), srv.URL, func(Entry) error { n++; return nil })
		if err != nil || n != tt.wantPages {
			t.Errorf("%s: Walk = %d pages, %v; want %d, nil", tt.name, n, err, tt.wantPages)
		}
		if cut := st.Cut&CutSitemaps != 0; cut != tt.wantCut {
			t.Errorf("%s: Stats.Cut = %v, want CutSitemaps %v", tt.name, st.Cut, tt.wantCut)
		}
		mu.Lock()
		for p, c := range hits {
			if c > 1 {
				t.Errorf("%s: %s fetched %d times, want once", tt.name, p, c)
			}
		}
		mu.Unlock()
	}
}

// gzipped is b compressed with gzip, at its fastest.
func gzipped(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Compressed sitemaps over HTTP: a .gz file, one gzipped twice, one sent
// with Content-Encoding: gzip besides, and a gzip bomb (51 MiB of spaces
// in a urlset): the bomb fails with ErrTooLarge after its first entry,
// the others are read, and the walk goes on.
func TestTrialBWalkerGzip(t *testing.T) {
	var base string
	page := func(p string) []byte {
		return []byte(fmt.Sprintf(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/%s</loc></url></urlset>`, base, p))
	}
	var bomb []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nSitemap: %s/index.xml\n", base)
		case "/index.xml":
			fmt.Fprint(w, indexOf(base+"/a.xml.gz", base+"/b.xml", base+"/c.xml", base+"/bomb.xml.gz", base+"/d.xml"))
		case "/a.xml.gz":
			w.Header().Set("Content-Type", "application/x-gzip")
			w.Write(gzipped(t, page("a")))
		case "/b.xml":
			w.Write(gzipped(t, gzipped(t, page("b"))))
		case "/c.xml":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gzipped(t, gzipped(t, page("c"))))
		case "/bomb.xml.gz":
			w.Write(bomb)
		case "/d.xml":
			w.Write(page("d"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	base = srv.URL
	body := append([]byte(nil), page("bomb-first")...)
	body = body[:len(body)-len("</urlset>")]
	body = append(body, bytes.Repeat([]byte(" "), 51<<20)...)
	body = append(body, []byte(`<url><loc>`+base+`/bomb-last</loc></url></urlset>`)...)
	bomb = gzipped(t, body)
	w := &Walker{Options: Options{Interval: time.Millisecond}}
	var got []string
	st, err := w.Walk(context.Background(), srv.URL, func(e Entry) error {
		got = append(got, strings.TrimPrefix(e.Loc, base))
		return nil
	})
	slices.Sort(got)
	if want := []string{"/a", "/b", "/bomb-first", "/c", "/d"}; !slices.Equal(got, want) {
		t.Errorf("Walk passed on %q, want %q", got, want)
	}
	var werr *WalkError
	if !errors.As(err, &werr) || st.Failed != 1 || len(werr.Errs) != 1 || !errors.Is(werr.Errs[0], ErrTooLarge) || !strings.HasSuffix(werr.Errs[0].URL, "/bomb.xml.gz") {
		t.Errorf("Walk = %+v, %v; want one failure, bomb.xml.gz with ErrTooLarge", st, err)
	}
}

// Redirect hops and retries are requests to the host like any other: a
// sitemap that redirects within the host, and one answered 503 with
// Retry-After: 1 once, keep one request in flight and the Crawl-delay
// from the end of each response (a redirect ends with its headers), and
// the retry comes no sooner than the Retry-After.
func TestTrialBWalkerHopsAndRetriesPaced(t *testing.T) {
	const cd = 200 * time.Millisecond
	var base string
	var mu sync.Mutex
	busy := false
	srv := loadsite.New(t, func(*http.Request) time.Duration { return 10 * time.Millisecond }, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nCrawl-delay: 0.2\nSitemap: %s/old.xml\nSitemap: %s/busy.xml\n", base, base)
		case "/old.xml":
			http.Redirect(w, r, base+"/new.xml", http.StatusMovedPermanently)
		case "/busy.xml":
			mu.Lock()
			first := !busy
			busy = true
			mu.Unlock()
			if first {
				w.Header().Set("Retry-After", "1")
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			fallthrough
		default:
			fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/page%s</loc></url></urlset>`, base, r.URL.Path)
		}
	})
	base = srv.URL
	w := &Walker{Options: Options{Interval: time.Millisecond, Concurrency: 2}}
	n := 0
	if _, err := w.Walk(context.Background(), srv.URL, func(Entry) error { n++; return nil }); err != nil || n != 2 {
		t.Errorf("Walk = %d pages, %v; want 2, nil", n, err)
	}
	peak, spans := srv.Result()
	if peak != 1 || len(spans) != 5 {
		t.Errorf("server saw %d requests, peak in flight %d; want 5 (robots.txt, old.xml, new.xml, busy.xml twice), 1", len(spans), peak)
	}
	var busyAt []loadsite.Span
	for i, s := range spans {
		if s.Path == "/busy.xml" {
			busyAt = append(busyAt, s)
		}
		if i == 0 {
			continue
		}
		if d := s.Start.Sub(spans[i-1].End); d < cd {
			t.Errorf("%s started %v after the end of %s, want ≥ Crawl-delay %v", s.Path, d, spans[i-1].Path, cd)
		}
	}
	if len(busyAt) == 2 && busyAt[1].Start.Sub(busyAt[0].End) < time.Second {
		t.Errorf("busy.xml fetched again %v after its 503 with Retry-After: 1, want ≥ 1s", busyAt[1].Start.Sub(busyAt[0].End))
	}
}

// A huge sitemap: a text file of 60,000 URLs (over sitemaps.org's 50,000)
// and, in another walk, MaxURLs below it. The entries within the limits
// are passed on, the cut is reported, and nothing is passed twice.
func TestTrialBWalkerHugeSitemap(t *testing.T) {
	var base string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nSitemap: %s/big.txt\n", base)
		case "/big.txt":
			var b strings.Builder
			for i := 0; i < 60000; i++ {
				fmt.Fprintf(&b, "%s/p%d\n", base, i)
			}
			w.Write([]byte(b.String()))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	base = srv.URL
	for _, tt := range []struct {
		maxURLs    int
		want       int
		wantFailed int
	}{
		{0, 50000, 1},
		{1000, 1000, 1}, // the file is read in full first: still over the limit
	} {
		w := &Walker{Options: Options{Interval: time.Millisecond, MaxURLs: tt.maxURLs}}
		seen := map[string]bool{}
		dup := 0
		st, err := w.Walk(context.Background(), srv.URL, func(e Entry) error {
			if seen[e.Loc] {
				dup++
			}
			seen[e.Loc] = true
			return nil
		})
		if len(seen) != tt.want || dup != 0 || st.Failed != tt.wantFailed {
			t.Errorf("Walk with MaxURLs %d = %d pages (%d twice), %d failed, %v; want %d, 0, %d", tt.maxURLs, len(seen), dup, st.Failed, err, tt.want, tt.wantFailed)
		}
	}
}
