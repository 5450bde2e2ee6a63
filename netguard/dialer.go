package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/http/httpproxy"
)

// ErrForbidden is the condition of a refused dial: the address is not
// public and no Allow prefix or AllowAddrPorts entry holds it. Match it
// with errors.Is; the error is an *AddressError (errors.As) inside
// net/http's and colly's wrapping.
var ErrForbidden = errors.New("netguard: address not public")

// AddressError reports a connection Dialer refused, or a request
// Transport refused to send to a proxy.
type AddressError struct {
	Network string     // "tcp", "tcp4", "tcp6"
	Host    string     // the host:port that was dialled or requested, as given
	Addr    netip.Addr // the address it resolved to; invalid if it did not resolve
	Reason  string     // why Addr is not public, as Reason says; "" when Err is set
	// Proxy is the host:port of the proxy the request was to go through,
	// "" for a direct dial: with a proxy, the request's own host is
	// checked before anything is sent to the proxy.
	Proxy string
	// Err is why Host could not be checked: the look-up of a request's
	// host that was to go through Proxy failed. The request is refused,
	// as its address is not known to be public.
	Err error

	ports []uint16 // the ports of Addr that are allowed, if any
}

func (e *AddressError) Error() string {
	var b strings.Builder
	if e.Proxy != "" {
		b.WriteString("netguard: refused to send a request for " + e.Host)
	} else {
		b.WriteString("netguard: refused to connect to " + e.Host)
	}
	if e.Addr.IsValid() {
		b.WriteString(" (" + e.Addr.String() + ")")
	}
	if e.Proxy != "" {
		b.WriteString(" to proxy " + e.Proxy)
	}
	if e.Err != nil {
		b.WriteString(": its address could not be checked: " + e.Err.Error())
		return b.String()
	}
	b.WriteString(": " + e.Reason + " address")
	if len(e.ports) > 0 {
		ports := make([]string, len(e.ports))
		for i, p := range e.ports {
			ports[i] = fmt.Sprint(p)
		}
		if len(ports) == 1 {
			b.WriteString(", of which only port " + ports[0] + " is allowed")
		} else {
			b.WriteString(", of which only ports " + strings.Join(ports, ", ") + " are allowed")
		}
	}
	return b.String()
}

// Unwrap returns ErrForbidden, and Err if it is set.
func (e *AddressError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrForbidden, e.Err}
	}
	return []error{ErrForbidden}
}

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
	// Its own Control or ControlContext, if any, runs after the check, and
	// its Resolver, if any, resolves the hosts of requests Transport sends
	// through a proxy.
	Dialer *net.Dialer

	// Allow lists prefixes let through although they are not public, on
	// every port: a crawl of an intranet, or tests on 127.0.0.0/8
	// (netip.MustParsePrefix("127.0.0.0/8")).
	Allow []netip.Prefix

	// AllowAddrPorts lists non-public addresses let through on one port
	// each: the site a crawl was asked for, which runs on this machine or
	// an intranet (AllowSite), and not the other services on its address
	// (Redis on 127.0.0.1:6379 beside a site on 127.0.0.1:8080).
	AllowAddrPorts []netip.AddrPort

	// Proxy is the proxy configuration of Transport; nil means the
	// environment's (HTTP_PROXY, HTTPS_PROXY, NO_PROXY and their lower-case
	// forms, read when Transport is called), as http.ProxyFromEnvironment
	// reads it. &httpproxy.Config{} sends every request direct. Dialer's
	// own DialContext does not use it.
	Proxy *httpproxy.Config
}

// DialContext connects to address on the named network, as net.Dialer's
// DialContext does, unless the address it would connect to is not public:
// then it returns an error that wraps an *AddressError (and so matches
// ErrForbidden) and sends nothing.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	base := d.base()
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

// base returns a copy of the dialer to connect with.
func (d *Dialer) base() net.Dialer {
	if d.Dialer != nil {
		return *d.Dialer
	}
	return net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
}

// check judges the resolved ip:port a dial of host is about to connect to.
func (d *Dialer) check(network, host, resolved string) error {
	ap, err := netip.ParseAddrPort(resolved)
	if err != nil {
		// Not an IP socket address (a Unix socket): nothing public about it.
		return &AddressError{Network: network, Host: host, Reason: "non-IP"}
	}
	return d.judge(network, host, ap.Addr(), ap.Port())
}

// judge returns nil if a connection to a on port may be made, else an
// *AddressError for host that says why not.
func (d *Dialer) judge(network, host string, a netip.Addr, port uint16) error {
	a = a.WithZone("")
	reason := Reason(a)
	if reason == "" {
		return nil
	}
	for _, p := range d.Allow {
		if p.Contains(a) || p.Contains(a.Unmap()) {
			return nil
		}
	}
	var ports []uint16
	for _, ap := range d.AllowAddrPorts {
		if ap.Addr().WithZone("").Unmap() != a.Unmap() {
			continue
		}
		if ap.Port() == port {
			return nil
		}
		if !slices.Contains(ports, ap.Port()) {
			ports = append(ports, ap.Port())
		}
	}
	return &AddressError{Network: network, Host: host, Addr: a, Reason: reason, ports: ports}
}
