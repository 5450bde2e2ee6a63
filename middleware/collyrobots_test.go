package robotsmw

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/gocolly/colly/v2"
)

// isCollyCheck relies on two things colly does (collyrobots.go): its own
// robots.txt check sends a request without colly.CheckRevisitKey in its
// context, and every request its scrape sends, redirect hops included,
// carries it. This test watches bare colly (no Guard) send both kinds
// through a transport of its own, so that a colly release that changes
// either fails here, naming which, rather than in the Guard's behaviour.
func TestCollyCheckCriterion(t *testing.T) {
	t.Setenv("COLLY_IGNORE_ROBOTSTXT", "false")
	s := newSite(t, robots("User-agent: *\nDisallow: /private\n", func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, "/robots.txt", http.StatusFound)
			return true
		}
		return false
	}))
	type sent struct {
		path  string
		check bool // isCollyCheck's answer
	}
	var mu sync.Mutex // guards seen
	var seen []sent
	c := colly.NewCollector(colly.AllowURLRevisit())
	c.WithTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		seen = append(seen, sent{r.URL.Path, isCollyCheck(r)})
		mu.Unlock()
		return http.DefaultTransport.RoundTrip(r)
	}))
	if c.IgnoreRobotsTxt {
		t.Fatal("colly.NewCollector with COLLY_IGNORE_ROBOTSTXT=false: IgnoreRobotsTxt = true; colly no longer reads the variable, the test proves nothing")
	}
	// colly checks robots.txt for the first request to the host, then
	// sends the page; a Visit of /robots.txt itself and a redirect hop to
	// it are requests of colly's scrape, not its check.
	for _, path := range []string{"/page", "/robots.txt", "/hop"} {
		if err := c.Visit(s.URL + path); err != nil {
			t.Fatalf("colly Visit(%s) = %v", path, err)
		}
	}
	want := []sent{
		{"/robots.txt", true}, // colly's check
		{"/page", false},
		{"/robots.txt", false}, // the Visit
		{"/hop", false},
		{"/robots.txt", false}, // the hop
	}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("colly sent (path, isCollyCheck) %v, want %v", seen, want)
		for i := range min(len(seen), len(want)) {
			switch {
			case seen[i] == want[i]:
			case want[i].check:
				t.Errorf("request %d, colly's own robots.txt check: isCollyCheck = false; its request now carries colly.CheckRevisitKey (see checkRobots in colly.go)", i+1)
			default:
				t.Errorf("request %d, GET %s of colly's scrape: isCollyCheck = %v; its context no longer carries colly.CheckRevisitKey (see scrape in colly.go)", i+1, want[i].path, seen[i].check)
			}
		}
	}
}
