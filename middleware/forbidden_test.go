package robotsmw

import (
	"errors"
	"net/http"
	"testing"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/netguard"
)

// A dial the netguard refuses is final at once: nothing reached the host,
// so it is not the host's failure (no back-off, no pause, nothing counted
// as sent) and waiting cannot help (no deferral, no retry) — for colly's
// requests, for robots.txt, and through Guard.Transport.
func TestRefusedDialIsFinal(t *testing.T) {
	s := newSite(t, robots("User-agent: *\nAllow: /\n", nil))

	var rep reports
	g := withReports(&Guard{Rate: rate.Inf}, &rep)
	c := colly.NewCollector()
	c.WithTransport(netguard.Transport(nil)) // before the Guard, which wraps it
	g.Attach(c)
	var onError []error
	c.OnError(func(_ *colly.Response, err error) { onError = append(onError, err) })
	err := c.Visit(s.URL + "/page")
	c.Wait()
	if !errors.Is(err, netguard.ErrForbidden) || !IsFinal(err) || !errors.Is(err, ErrRobotsUnreachable) {
		t.Errorf("Visit(/page) through netguard = %v, want a final ErrRobotsUnreachable wrapping netguard.ErrForbidden", err)
	}
	if len(onError) != 1 || !IsFinal(onError[0]) {
		t.Errorf("OnError got %v, want one final outcome", onError)
	}
	if n := len(s.log()); n != 0 {
		t.Errorf("the server saw %d requests, want 0", n)
	}
	if hs := hostStats(g, "127.0.0.1"); hs.Sent != 0 || hs.Backoffs != 0 || hs.Retried != 0 || hs.Deferred != 0 {
		t.Errorf("Stats after a refused dial = %+v, want nothing sent, no back-off, no retry, no deferral", hs)
	}

	// Guard.Transport: the caller gets the refusal at once, too.
	g2 := &Guard{Rate: rate.Inf}
	client := &http.Client{Transport: g2.Transport(netguard.Transport(nil))}
	if resp, err := client.Get(s.URL + "/page"); err == nil {
		resp.Body.Close()
		t.Errorf("Guard.Transport Get(/page) through netguard: no error")
	} else if !errors.Is(err, netguard.ErrForbidden) {
		t.Errorf("Guard.Transport Get(/page) = %v, want netguard.ErrForbidden", err)
	}
	if hs := hostStats(g2, "127.0.0.1"); hs.Sent != 0 || hs.Backoffs != 0 {
		t.Errorf("Guard.Transport Stats after a refused dial = %+v, want nothing sent and no back-off", hs)
	}
}
