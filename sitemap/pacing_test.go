package sitemap

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/internal/loadsite"
)

// slack is how much earlier the server may see a request than the client
// sent it on its schedule: a connection's first bytes, the timer's grain.
const slack = 15 * time.Millisecond

// A Walker paces each host as the server feels it —
// one request in flight, starts an Interval apart, and the Crawl-delay
// of robots.txt counted from the end of the previous response.
func TestWalkerPacesHost(t *testing.T) {
	for _, tt := range []struct {
		name     string
		robots   string
		interval time.Duration
		startGap time.Duration // least time between two starts
		idleGap  time.Duration // least time from an end to the next start
	}{
		{"Interval", "User-agent: *\nAllow: /\n", 150 * time.Millisecond, 150 * time.Millisecond, 0},
		{"Crawl-delay", "User-agent: *\nCrawl-delay: 0.2\n", time.Millisecond, 0, 200 * time.Millisecond},
	} {
		var base string
		srv := loadsite.New(t, func(*http.Request) time.Duration { return 50 * time.Millisecond }, func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.URL.Path == "/robots.txt":
				fmt.Fprintf(w, "%sSitemap: %s/index.xml\n", tt.robots, base)
			case r.URL.Path == "/index.xml":
				fmt.Fprint(w, indexOf(base+"/a.xml", base+"/b.xml", base+"/c.xml"))
			case strings.HasSuffix(r.URL.Path, ".xml"):
				fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/page%s</loc></url></urlset>`, base, r.URL.Path)
			default:
				http.NotFound(w, r)
			}
		})
		base = srv.URL
		w := &Walker{Options: Options{Interval: tt.interval, Concurrency: 4}}
		n := 0
		if _, err := w.Walk(context.Background(), srv.URL, func(Entry) error { n++; return nil }); err != nil || n != 3 {
			t.Errorf("%s: Walk = %d pages, %v; want 3, nil", tt.name, n, err)
		}
		peak, spans := srv.Result()
		if peak != 1 || len(spans) != 5 {
			t.Errorf("%s: server saw %d requests, peak in flight %d; want 5 (robots.txt, index, 3 sitemaps), 1", tt.name, len(spans), peak)
		}
		for i := 1; i < len(spans); i++ {
			if d := spans[i].Start.Sub(spans[i-1].Start); d < tt.startGap-slack {
				t.Errorf("%s: request %d started %v after the one before, want ≥ %v", tt.name, i, d, tt.startGap)
			}
			// robots.txt's Crawl-delay applies once it is read.
			if d := spans[i].Start.Sub(spans[i-1].End); i > 1 && d < tt.idleGap-slack {
				t.Errorf("%s: request %d started %v after the end of the one before, want ≥ Crawl-delay %v", tt.name, i, d, tt.idleGap)
			}
		}
	}
}
