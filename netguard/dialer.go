package netguard

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// ErrForbidden is the condition of a refused dial: the address is not
// public and no Allow prefix holds it. Match it with errors.Is; the error is
// an *AddressError (errors.As) inside net/http's and colly's wrapping.
var ErrForbidden = errors.New("netguard: address not public")

// AddressError reports a connection Dialer refused.
type AddressError struct {
	Network string     // "tcp", "tcp4", "tcp6"
	Host    string     // the host:port that was dialled, as given
	Addr    netip.Addr // the address it resolved to
	Reason  string     // why Addr is not public, as Reason says
}

func (e *AddressError) Error() string {
	msg := "netguard: refused to connect to " + e.Host
	if e.Addr.IsValid() {
		msg += " (" + e.Addr.String() + ")"
	}
	return msg + ": " + e.Reason + " address"
}

// Unwrap returns ErrForbidden.
func (e *AddressError) Unwrap() error { return ErrForbidden }

// Dialer makes TCP connections to public addresses only. The address is
// checked at connect time, after name resolution and for every address a
// dial tries, so neither a host name that resolves to a private address nor
// one whose DNS answer changes between two look-ups (rebinding) gets
// through. The zero value is ready to use.
//
// A Dialer is safe for concurrent use; its fields must not change once it is
// in use.
type Dialer struct {
	// Dialer is the dialer to connect with; nil means one with the
	// timeouts of http.DefaultTransport (30 s connect, 30 s keep-alive).
	// Its own Control or ControlContext, if any, runs after the check.
	Dialer *net.Dialer

	// Allow lists prefixes let through although they are not public: a
	// crawl of an intranet site, or a test server on 127.0.0.1
	// (netip.MustParsePrefix("127.0.0.0/8")).
	Allow []netip.Prefix
}

// DialContext connects to address on the named network, as net.Dialer's
// DialContext does, unless the address it would connect to is not public:
// then it returns an error that wraps an *AddressError (and so matches
// ErrForbidden) and sends nothing.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	var base net.Dialer
	if d.Dialer != nil {
		base = *d.Dialer
	} else {
		base = net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	}
	next := base.ControlContext
	if next == nil && base.Control != nil {
		control := base.Control
		next = func(_ context.Context, network, address string, c syscall.RawConn) error {
			return control(network, address, c)
		}
	}
	base.Control = nil
	base.ControlContext = func(ctx context.Context, network, resolved string, c syscall.RawConn) error {
		if err := d.check(network, address, resolved); err != nil {
			return err
		}
		if next != nil {
			return next(ctx, network, resolved, c)
		}
		return nil
	}
	return base.DialContext(ctx, network, address)
}

// check judges the resolved ip:port a dial of host is about to connect to.
func (d *Dialer) check(network, host, resolved string) error {
	ap, err := netip.ParseAddrPort(resolved)
	if err != nil {
		// Not an IP socket address (a Unix socket): nothing public about it.
		return &AddressError{Network: network, Host: host, Reason: "non-IP"}
	}
	a := ap.Addr().WithZone("")
	reason := Reason(a)
	if reason == "" {
		return nil
	}
	for _, p := range d.Allow {
		if p.Contains(a) || p.Contains(a.Unmap()) {
			return nil
		}
	}
	return &AddressError{Network: network, Host: host, Addr: a, Reason: reason}
}

// Transport returns a clone of http.DefaultTransport that dials through d
// (nil d: the zero Dialer) and uses no proxy — through a proxy the
// connection goes to the proxy, and the check would say nothing about where
// the request ends up.
func Transport(d *Dialer) *http.Transport {
	if d == nil {
		d = new(Dialer)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = d.DialContext
	return t
}
