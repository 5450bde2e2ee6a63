package robotsmw

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/policy"
)

// The Guard's own robots.txt fetch of a new origin on a busy host does not
// queue behind the pages waiting for the host's limiter: it takes the next
// slot of the host's gate, so it is neither starved past the cache's
// timeout nor recorded as unreachable.
func TestRobotsFetchNotStarvedByPages(t *testing.T) {
	a := newSite(t, robots("", nil))
	b := newSite(t, robots("", nil))
	var rep reports
	g := withReports(&Guard{Rate: rate.Every(150 * time.Millisecond)}, &rep)
	g.Cache = &policy.Cache{
		Client:  &http.Client{Transport: &pacedTransport{g: g, next: http.DefaultTransport}},
		Timeout: time.Second,
	}
	c := colly.NewCollector(g.Attach, colly.Async())
	const pages = 16 // 2.4 s of slots, beyond the cache's 1 s timeout
	for i := 0; i < pages; i++ {
		c.Visit(fmt.Sprintf("%s/p%d", a.URL, i))
	}
	time.Sleep(300 * time.Millisecond) // the pages wait for the limiter
	c.Visit(b.URL + "/page")
	c.Wait()

	if rep.len() != 0 {
		t.Errorf("ErrorHandler got %v, want nothing", rep.errs)
	}
	if n := b.count("/robots.txt"); n != 1 {
		t.Fatalf("server B received robots.txt %d times, want 1", n)
	}
	if n := b.count("/page"); n != 1 {
		t.Errorf("server B received /page %d times, want 1", n)
	}
	var robotsAt time.Time
	for _, h := range b.log() {
		if h.path == "/robots.txt" {
			robotsAt = h.at
		}
	}
	alog := a.log()
	if last := alog[len(alog)-1]; !robotsAt.Before(last.at) {
		t.Errorf("B's robots.txt arrived %v after A's last page, want before it", robotsAt.Sub(last.at))
	}
}
