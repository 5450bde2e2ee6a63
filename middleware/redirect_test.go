package robotsmw

import (
	"net/http"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"
)

// A same-host redirect whose hop must wait for the host's spacing longer
// than the client's timeout allows is deferred and resumed at the hop, not
// sent late, struck as a network error and retried from the start.
func TestRedirectHopWaitBoundedByTimeout(t *testing.T) {
	s := newSite(t, robots("User-agent: *\nCrawl-delay: 1.5\n", func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/a" {
			http.Redirect(w, r, "/b", http.StatusFound)
			return true
		}
		return false
	}))
	var rep reports
	g := withReports(&Guard{Rate: rate.Inf}, &rep)
	c := colly.NewCollector(g.Attach)
	c.SetRequestTimeout(1 * time.Second)
	var got []string
	c.OnResponse(func(r *colly.Response) { got = append(got, r.Request.URL.Path) })
	c.Visit(s.URL + "/a")
	c.Wait()
	if n := s.count("/a"); n != 1 {
		t.Errorf("server received /a %d times, want 1", n)
	}
	if n := s.count("/b"); n != 1 {
		t.Errorf("server received /b %d times, want 1", n)
	}
	if len(got) != 1 || got[0] != "/b" {
		t.Errorf("OnResponse saw %v, want [/b]", got)
	}
	if rep.len() != 0 {
		t.Errorf("ErrorHandler got %v, want nothing", rep.errs)
	}
	hs := hostStats(g, "127.0.0.1")
	if hs.Backoffs != 0 || hs.Sent != 3 {
		t.Errorf("Stats = %+v, want Backoffs 0, Sent 3 (robots.txt, /a, /b)", hs)
	}
}
