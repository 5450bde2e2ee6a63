package sitemap

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/policy"
)

// Review: with Interval < 0 (a paced Client), a request whose connection
// never comes (dial hangs: a blackholed address, a stalled proxy or TLS
// handshake) is never bounded by Timeout: GotConn never fires and no
// response arrives, so the sendDeadline is never armed.
func TestReviewSendDeadlineDialHang(t *testing.T) {
	var base string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "User-agent: *\nSitemap: %s/s.xml\n", base)
	}))
	defer srv.Close()
	base = srv.URL
	hang := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	w := &Walker{
		Client:  &http.Client{Transport: hang},
		Robots:  &policy.Cache{Client: srv.Client()},
		Options: Options{Interval: -1, Timeout: 200 * time.Millisecond, Retries: -1},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := w.Walk(ctx, srv.URL, func(Entry) error { return nil })
	if ctx.Err() != nil {
		t.Fatalf("Walk with Timeout 200ms against a dial that hangs: still running after 3s (err %v); Timeout never fired", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Walk err = %v, want one wrapping context.DeadlineExceeded", err)
	}
}
