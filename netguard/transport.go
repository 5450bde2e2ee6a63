package netguard

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http/httpproxy"
	"golang.org/x/net/idna"
)

// Transport returns a clone of http.DefaultTransport that dials through d
// (nil d: the zero Dialer) and sends requests through the proxies of
// d.Proxy, the environment's by default (HTTP_PROXY, HTTPS_PROXY,
// NO_PROXY), as curl, wget and Go's default transport do.
//
// A request that goes through a proxy never goes direct, and the host the
// proxy is asked for (the CONNECT target of an https request; the request
// line's host of an http one, which net/http takes from the request's
// Host) is checked before anything is sent to the proxy, which connects to
// it on the crawler's behalf: a host that is an IP address is judged as a dial
// would judge it (Reason, Allow, AllowAddrPorts), and a host name is
// resolved here (with d.Dialer's Resolver, if any) and refused if any of
// its addresses is refused, or if it does not resolve — the proxy might
// reach it where this machine cannot look. The proxy resolves the name
// anew, so this check cannot see DNS rebinding between the two look-ups;
// a proxy should refuse internal destinations itself.
//
// The connection to the proxy itself is not checked: its address (the
// host and port of HTTP_PROXY or HTTPS_PROXY) is one the operator chose,
// and is often on a private network. A request whose own host and port are
// the proxy's, sent direct (NO_PROXY names it, or it is a loopback
// address), is checked as a proxied one is.
//
// Set proxies through d.Proxy, not the returned transport's Proxy field:
// a Proxy function set there (colly's SetProxyFunc sets it) replaces the
// check of the request's host, and the dial to a proxy d.Proxy does not
// name is checked as any other, so refused on a non-public address.
func Transport(d *Dialer) *http.Transport {
	if d == nil {
		d = new(Dialer)
	}
	cfg := d.Proxy
	if cfg == nil {
		cfg = httpproxy.FromEnvironment()
	}
	p := &proxies{d: d, choose: cfg.ProxyFunc(), addrs: map[string]bool{}}
	for _, s := range []string{cfg.HTTPProxy, cfg.HTTPSProxy} {
		if u := parseProxy(s); u != nil {
			p.addrs[canonicalAddr(u)] = true
		}
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = p.proxy
	t.DialContext = p.dialContext
	return t
}

// proxies is the proxy side of a Transport: which proxy a request goes
// through, the check of its host before it is sent there, and the dials
// of the proxies themselves. Its fields are set before use and never
// change, so it is safe for concurrent use.
type proxies struct {
	d      *Dialer
	choose func(*url.URL) (*url.URL, error)
	addrs  map[string]bool // host:port of the configured proxies, dialled unchecked
}

// proxy is the transport's Proxy function.
func (p *proxies) proxy(req *http.Request) (*url.URL, error) {
	pu, err := p.choose(req.URL)
	if err != nil {
		return nil, err
	}
	if pu != nil {
		return pu, p.checkTarget(req.Context(), proxiedAddr(req), canonicalAddr(pu))
	}
	if target := canonicalAddr(req.URL); p.addrs[target] {
		// Direct, to the proxy's own address: the dial will not check it.
		return nil, p.checkTarget(req.Context(), target, "")
	}
	return nil, nil
}

// proxiedAddr returns the host:port a proxy is asked to connect to for
// req. For https it is the CONNECT target, canonicalAddr of the URL. For
// http it is the host of the request line, which net/http writes from
// req.Host (colly copies a Host header there), else from the URL's host,
// in Punycode without IDNA's mapping (httpguts.PunycodeHostPort, which
// Request.write calls:
// https://cs.opensource.google/go/go/+/refs/tags/go1.24.0:src/net/http/request.go):
// "ｅｘａｍｐｌｅ.com" is dialled as example.com but reaches a proxy as
// xn--…, a name of its own.
func proxiedAddr(req *http.Request) string {
	if req.URL.Scheme != "http" {
		return canonicalAddr(req.URL)
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	if a, err := httpguts.PunycodeHostPort(host); err == nil {
		host = a
	}
	name, port, err := net.SplitHostPort(host)
	if err != nil {
		name, port = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), ""
	}
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(name, port)
}

// dialContext dials the configured proxies as they are, and every other
// address through the Dialer's check.
func (p *proxies) dialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if p.addrs[address] {
		base := p.d.base()
		return base.DialContext(ctx, network, address)
	}
	return p.d.DialContext(ctx, network, address)
}

// checkTarget judges the address of host, a host:port, before a request
// for it goes to proxy ("" for a direct request the dial does not check).
func (p *proxies) checkTarget(ctx context.Context, host, proxy string) error {
	name, ps, _ := net.SplitHostPort(host)
	port, _ := strconv.ParseUint(ps, 10, 16)
	fail := func(err error) error {
		if ae, ok := err.(*AddressError); ok {
			ae.Proxy = proxy
		}
		return err
	}
	if a, err := netip.ParseAddr(name); err == nil {
		return fail(p.d.judge("tcp", host, a, uint16(port)))
	}
	resolver := net.DefaultResolver
	if p.d.Dialer != nil && p.d.Dialer.Resolver != nil {
		resolver = p.d.Dialer.Resolver
	}
	addrs, err := resolver.LookupNetIP(ctx, "ip", name)
	if err != nil {
		return &AddressError{Network: "tcp", Host: host, Proxy: proxy, Err: err}
	}
	for _, a := range addrs {
		if err := p.d.judge("tcp", host, a, uint16(port)); err != nil {
			return fail(err)
		}
	}
	return nil
}

// defaultPort returns the port of a URL of scheme that names none, as
// net/http dials it, or "" for a scheme it does not know.
func defaultPort(scheme string) string {
	switch scheme {
	case "http":
		return "80"
	case "https":
		return "443"
	case "socks5", "socks5h":
		return "1080"
	}
	return ""
}

// canonicalAddr returns the host:port net/http dials for u, as net/http's
// own canonicalAddr writes it
// (https://cs.opensource.google/go/go/+/refs/tags/go1.24.0:src/net/http/transport.go).
func canonicalAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = defaultPort(u.Scheme)
	}
	return net.JoinHostPort(asciiHostname(u), port)
}

// asciiHostname returns u's host name as net/http dials it: converted to
// ASCII by IDNA's lookup profile when it is not ASCII, which also maps
// full-width digits and dots ("１２７．０．０．１" is dialled as 127.0.0.1).
// A name the profile refuses is returned as written (net/http dials it so,
// and the dial fails).
func asciiHostname(u *url.URL) string {
	name := u.Hostname()
	if !isASCII(name) {
		if a, err := idna.Lookup.ToASCII(name); err == nil {
			return a
		}
	}
	return name
}

// isASCII reports whether s is ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// parseProxy reads a proxy setting as httpproxy does: a URL, or a
// host:port taken as an http:// URL. It returns nil for "" or a setting
// that does not parse (whose requests then fail in httpproxy).
func parseProxy(s string) *url.URL {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" {
		if v, err2 := url.Parse("http://" + s); err2 == nil {
			return v
		}
	}
	if err != nil {
		return nil
	}
	return u
}
