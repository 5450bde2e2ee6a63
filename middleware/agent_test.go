package robotsmw

import (
	"errors"
	"testing"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"
)

// An empty Guard.Agent matches robots.txt for the product token of the
// collector's User-Agent (RFC 9309 §2.2.1), which picks its own group.
func TestEmptyAgentUsesUserAgentToken(t *testing.T) {
	s := newSite(t, robots("User-agent: FooBot\nDisallow: /page\n\nUser-agent: *\nAllow: /\n", nil))
	tests := []struct {
		ua      string
		blocked bool
	}{
		{"FooBot/2.0 (+https://example.org/bot)", true},
		{"OtherBot/1.0", false},
		// The form real bots send: the bot's token, not "Mozilla".
		{"Mozilla/5.0 (compatible; FooBot/1.0; +https://example.org/bot)", true},
		// A browser's User-Agent names no bot: only the '*' group applies.
		{"Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0", false},
	}
	for _, tt := range tests {
		var rep reports
		g := withReports(&Guard{Rate: rate.Inf}, &rep)
		c := colly.NewCollector(colly.UserAgent(tt.ua), g.Attach)
		before := s.count("/page")
		c.Visit(s.URL + "/page")
		fetched := s.count("/page") - before
		errs := rep.get(s.URL + "/page")
		var de *DisallowedError
		switch {
		case tt.blocked && (fetched != 0 || len(errs) != 1 || !errors.As(errs[0], &de)):
			t.Errorf("UserAgent %q: /page fetched %d times, ErrorHandler %v; want blocked", tt.ua, fetched, errs)
		case tt.blocked && de.Agent != "FooBot":
			t.Errorf("UserAgent %q: DisallowedError.Agent = %q, want FooBot", tt.ua, de.Agent)
		case !tt.blocked && (fetched != 1 || len(errs) != 0):
			t.Errorf("UserAgent %q: /page fetched %d times, ErrorHandler %v; want fetched once", tt.ua, fetched, errs)
		}
	}
}
