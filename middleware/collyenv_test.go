package robotsmw

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"
)

// COLLY_IGNORE_ROBOTSTXT=false turns colly's own robots.txt check back on
// after the options of NewCollector. Attached after NewCollector, the Guard
// turns it off for good and reports a disallowed request; attached as an
// option, colly's check runs first, before any callback, and Visit returns
// colly's ErrRobotsTxtBlocked. Either way the request never reaches the
// server, and it is reported to someone.
func TestCollyRobotsEnvFalse(t *testing.T) {
	t.Setenv("COLLY_IGNORE_ROBOTSTXT", "false")
	s := newSite(t, robots("User-agent: *\nDisallow: /private\n", nil))

	var rep reports
	g := withReports(&Guard{Rate: rate.Inf}, &rep)
	c := colly.NewCollector()
	g.Attach(c)
	if err := c.Visit(s.URL + "/private/a"); err != nil {
		t.Errorf("attached after NewCollector: Visit(/private/a) = %v, want nil", err)
	}
	if errs := rep.get(s.URL + "/private/a"); len(errs) != 1 || !errors.Is(errs[0], ErrDisallowed) {
		t.Errorf("attached after NewCollector: ErrorHandler(/private/a) = %v, want ErrDisallowed", errs)
	}
	if n := s.count("/robots.txt"); n != 1 {
		t.Errorf("attached after NewCollector: robots.txt fetched %d times, want 1 (the Guard's)", n)
	}

	var rep2 reports
	g2 := withReports(&Guard{Rate: rate.Inf}, &rep2)
	c2 := colly.NewCollector(g2.Attach)
	if err := c2.Visit(s.URL + "/private/b"); !errors.Is(err, colly.ErrRobotsTxtBlocked) && !errors.Is(err, ErrDisallowed) {
		t.Errorf("attached as option: Visit(/private/b) = %v, want colly.ErrRobotsTxtBlocked", err)
	}

	for _, h := range s.log() {
		if strings.HasPrefix(h.path, "/private") {
			t.Errorf("server received %s %s", h.method, h.path)
		}
	}
}
