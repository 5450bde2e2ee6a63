package sitemap

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/policy"
)

// With Interval < 0 (a paced Client), a request whose connection
// never comes (dial hangs: a blackholed address, a stalled proxy or TLS
// handshake) is never bounded by Timeout: GotConn never fires and no
// response arrives, so the sendDeadline is never armed.
func TestSendDeadlineDialHang(t *testing.T) {
	var base string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "User-agent: *\nSitemap: %s/s.xml\n", base)
	}))
	defer srv.Close()
	base = srv.URL
	hang := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	w := &Walker{
		Client:  &http.Client{Transport: hang},
		Robots:  &policy.Cache{Client: srv.Client()},
		Options: Options{Interval: -1, Timeout: 200 * time.Millisecond, Retries: -1},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := w.Walk(ctx, srv.URL, func(Entry) error { return nil })
	if ctx.Err() != nil {
		t.Fatalf("Walk with Timeout 200ms against a dial that hangs: still running after 3s (err %v); Timeout never fired", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Walk err = %v, want one wrapping context.DeadlineExceeded", err)
	}
}

// A redirect hop starts Timeout anew when it is sent: its wait for the
// host's Crawl-delay (the Walker's own pacing of the hop) does not count
// against Timeout, so a host whose Crawl-delay is longer than Timeout
// still has the sitemaps that redirect within it read.
func TestSendDeadlineHopCrawlDelay(t *testing.T) {
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
