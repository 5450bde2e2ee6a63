package robotsmw

import (
	"net/http"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"
)

// A timeoutTable holds the request timeouts the Guard took over from
// colly's HTTP clients: Attach moves a client's Timeout into the
// transport it installs, which enforces it itself (see
// guardTransport.bound). Should that transport be replaced later (a
// WithTransport or SetProxyFunc after Attach), the Timeout goes back to
// the client, so that its requests stay bounded.
type timeoutTable struct {
	// mu guards m, and the Timeout of each client in m while it is taken
	// or given back: every request of a collector whose transport was
	// replaced passes giveBack before the client sends it, so the write
	// comes before the client's reads.
	mu sync.Mutex
	m  map[*http.Client]time.Duration
}

// take takes the Timeout of hc, c's client, over and returns it; 0 if hc
// has none. The client is changed only through colly's own
// SetRequestTimeout.
func (t *timeoutTable) take(c *colly.Collector, hc *http.Client) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := hc.Timeout
	if d <= 0 {
		return 0
	}
	if t.m == nil {
		t.m = make(map[*http.Client]time.Duration)
	}
	t.m[hc] = d
	c.SetRequestTimeout(0)
	return d
}

// giveBack gives c's client the Timeout taken from it, unless it was
// given one of its own meanwhile.
func (t *timeoutTable) giveBack(c *colly.Collector) {
	hc := collyClient(c)
	if hc == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if d, ok := t.m[hc]; ok {
		delete(t.m, hc)
		if hc.Timeout == 0 {
			c.SetRequestTimeout(d)
		}
	}
}
