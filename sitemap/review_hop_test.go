package sitemap

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Review: the sendDeadline starts at the first request's send and keeps
// running through the redirect hops, so the hop's wait for the host's
// Crawl-delay (the Walker's own pacing of the hop) counts against
// Timeout: a host whose Crawl-delay is longer than Timeout fails every
// sitemap that redirects within it, unsent — the trial-b bug, for hops.
func TestReviewSendDeadlineHopCrawlDelay(t *testing.T) {
	var base string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nCrawl-delay: 1\nSitemap: %s/s.xml\n", base)
		case "/s.xml":
			http.Redirect(w, r, "/t.xml", http.StatusMovedPermanently)
		case "/t.xml":
			fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/p</loc></url></urlset>`, base)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	base = srv.URL
	w := &Walker{Client: srv.Client(), Options: Options{Timeout: 400 * time.Millisecond, Retries: -1, NoFallback: true}}
	n := 0
	_, err := w.Walk(context.Background(), srv.URL, func(Entry) error { n++; return nil })
	if err != nil || n != 1 {
		t.Errorf("Walk (Crawl-delay 1s, Timeout 400ms, /s.xml redirected to /t.xml) = %d pages, %v; want 1, nil", n, err)
	}
}
