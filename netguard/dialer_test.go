package netguard

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"syscall"
	"testing"
)

func TestDialerRefusesLoopback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request reached the server: %s", r.URL)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	client := &http.Client{Transport: Transport(nil)}
	for _, u := range []string{
		srv.URL,                             // 127.0.0.1
		"http://localhost:" + port + "/",    // a name, checked after resolution
		"http://[::ffff:127.0.0.1]:" + port, // IPv4-mapped
	} {
		resp, err := client.Get(u)
		if err == nil {
			resp.Body.Close()
			t.Errorf("Get(%s): no error, want a refused dial", u)
			continue
		}
		if !errors.Is(err, ErrForbidden) {
			t.Errorf("Get(%s) = %v, want errors.Is ErrForbidden", u, err)
		}
		var ae *AddressError
		if !errors.As(err, &ae) {
			t.Errorf("Get(%s) = %v, want an *AddressError", u, err)
			continue
		}
		if ae.Reason != "loopback" || !ae.Addr.IsLoopback() && !ae.Addr.Unmap().IsLoopback() {
			t.Errorf("Get(%s): AddressError %+v, want a loopback address", u, ae)
		}
		if !strings.Contains(ae.Error(), "loopback address") {
			t.Errorf("Get(%s): message %q does not say why", u, ae.Error())
		}
	}
}

func TestDialerAllow(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	d := &Dialer{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	resp, err := (&http.Client{Transport: Transport(d)}).Get(srv.URL)
	if err != nil {
		t.Fatalf("Get(%s) with 127.0.0.0/8 allowed: %v", srv.URL, err)
	}
	resp.Body.Close()

	d = &Dialer{Allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}
	if _, err := d.DialContext(context.Background(), "tcp", srv.Listener.Addr().String()); !errors.Is(err, ErrForbidden) {
		t.Errorf("DialContext(%s) with only 10.0.0.0/8 allowed = %v, want ErrForbidden", srv.Listener.Addr(), err)
	}
}

func TestDialerKeepsBaseControl(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	called := 0
	d := &Dialer{
		Dialer: &net.Dialer{Control: func(network, address string, c syscall.RawConn) error {
			called++
			return nil
		}},
		Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
	}
	conn, err := d.DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("DialContext(%s): %v", ln.Addr(), err)
	}
	conn.Close()
	if called != 1 {
		t.Errorf("DialContext(%s) called the base dialer's Control %d times, want 1", ln.Addr(), called)
	}
	// A refused address never reaches the base Control.
	called = 0
	d.Allow = nil
	if _, err := d.DialContext(context.Background(), "tcp", ln.Addr().String()); !errors.Is(err, ErrForbidden) {
		t.Fatalf("DialContext(%s) = %v, want ErrForbidden", ln.Addr(), err)
	}
	if called != 0 {
		t.Errorf("refused DialContext(%s) called the base Control %d times, want 0", ln.Addr(), called)
	}
}
