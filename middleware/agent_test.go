package robotsmw

import (
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
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

// The Guard's own cache fetches robots.txt with the UserAgent the
// collector has when the crawl starts, whether colly.UserAgent came
// before or after Attach among NewCollector's options or was set after
// it, and through the transport of the collector attached first, even if
// only another one makes requests.
func TestRobotsFetchUserAgent(t *testing.T) {
	var mu sync.Mutex // guards agents
	var agents []string
	taken := func() []string {
		mu.Lock()
		defer mu.Unlock()
		a := agents
		agents = nil
		return a
	}
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			mu.Lock()
			agents = append(agents, r.Header.Get("User-Agent"))
			mu.Unlock()
		}
		w.Write([]byte("ok"))
	})
	const ua = "MyBot/1.0 (+https://example.org/bot)"
	for _, tc := range []struct {
		name string
		make func(g *Guard) *colly.Collector
	}{
		{"UserAgent option before Attach", func(g *Guard) *colly.Collector {
			return colly.NewCollector(colly.UserAgent(ua), g.Attach)
		}},
		{"UserAgent option after Attach", func(g *Guard) *colly.Collector {
			return colly.NewCollector(g.Attach, colly.UserAgent(ua))
		}},
		{"UserAgent set after NewCollector", func(g *Guard) *colly.Collector {
			c := colly.NewCollector(g.Attach)
			c.UserAgent = ua
			return c
		}},
	} {
		c := tc.make(&Guard{Rate: rate.Inf})
		if err := c.Visit(s.URL + "/page"); err != nil {
			t.Errorf("%s: Visit(/page) = %v", tc.name, err)
		}
		if agents := taken(); len(agents) != 1 || agents[0] != ua {
			t.Errorf("%s: robots.txt fetched with User-Agent %q, want [%q]", tc.name, agents, ua)
		}
	}

	// Attached to a collector with a transport of its own first, then to
	// one without: robots.txt goes through the first's transport.
	var through atomic.Int32
	g := &Guard{Rate: rate.Inf}
	first := colly.NewCollector()
	first.WithTransport(countingTransport{&through})
	g.Attach(first)
	second := colly.NewCollector(g.Attach)
	second.UserAgent = ua
	if err := second.Visit(s.URL + "/page"); err != nil {
		t.Errorf("second collector: Visit(/page) = %v", err)
	}
	if through.Load() != 1 {
		t.Errorf("robots.txt went %d times through the first collector's transport, want once", through.Load())
	}
	if agents := taken(); len(agents) != 1 || agents[0] != "colly - https://github.com/gocolly/colly" {
		t.Errorf("robots.txt fetched with User-Agent %q, want the first collector's (colly's default)", agents)
	}
}

// countingTransport counts the requests it passes to http.DefaultTransport.
type countingTransport struct{ n *atomic.Int32 }

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}
