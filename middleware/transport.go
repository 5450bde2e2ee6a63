package robotsmw

import (
	"net/http"
)

// A pacedTransport sends the Guard's own robots.txt requests: each waits
// for its host's pause and limiter first, so robots.txt counts against the
// same per-host rate as every other request (politeness.md §5.2 F).
type pacedTransport struct {
	g    *Guard
	next http.RoundTripper
}

func (t *pacedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	h := t.g.host(req.URL)
	err := t.g.wait(req.Context(), h, true)
	if err == nil {
		err = t.g.gate(req.Context(), h, true)
	}
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	return t.next.RoundTrip(req)
}
