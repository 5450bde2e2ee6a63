package netguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
	"golang.org/x/net/http/httpproxy"
)

// A forwardProxy is a loopback server that takes the requests a client
// sends to a proxy and answers them itself, connecting nowhere: it records
// what reached it, "GET http://8.8.8.8/robots.txt" or "CONNECT 8.8.8.8:443".
type forwardProxy struct {
	*httptest.Server
	mu   sync.Mutex // guards seen
	seen []string
}

func newForwardProxy(t *testing.T) *forwardProxy {
	p := &forwardProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.seen = append(p.seen, r.Method+" "+r.RequestURI)
		p.mu.Unlock()
		if r.Method == http.MethodConnect {
			http.Error(w, "no tunnels here", http.StatusForbidden)
			return
		}
		fmt.Fprint(w, "via proxy")
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *forwardProxy) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seen)
}

// loopbackOnly is a base dialer that connects to loopback addresses only,
// so that a test of a request that must go through the proxy never sends a
// packet anywhere else, whatever the code under test does.
func loopbackOnly() *net.Dialer {
	return &net.Dialer{
		Control: func(network, address string, c syscall.RawConn) error {
			if ap, err := netip.ParseAddrPort(address); err != nil || !ap.Addr().Unmap().IsLoopback() {
				return fmt.Errorf("test: refused to leave loopback for %s", address)
			}
			return nil
		},
		Resolver: fakeDNS(map[string]netip.Addr{
			"public.test.":   netip.MustParseAddr("8.8.8.8"),
			"internal.test.": netip.MustParseAddr("10.0.0.1"),
			"loop.test.":     netip.MustParseAddr("127.0.0.3"),
		}),
	}
}

// fakeDNS returns a resolver that asks a DNS server in the test process,
// which answers A records from names (a name it does not hold does not
// exist), so that host names are resolved without a network.
func fakeDNS(names map[string]netip.Addr) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
		client, server := net.Pipe() // not a PacketConn: DNS over TCP framing
		go func() {
			defer server.Close()
			for {
				var n [2]byte
				if _, err := io.ReadFull(server, n[:]); err != nil {
					return
				}
				q := make([]byte, int(n[0])<<8|int(n[1]))
				if _, err := io.ReadFull(server, q); err != nil {
					return
				}
				answer, err := dnsAnswer(q, names)
				if err != nil {
					return
				}
				if _, err := server.Write(append([]byte{byte(len(answer) >> 8), byte(len(answer))}, answer...)); err != nil {
					return
				}
			}
		}()
		return client, nil
	}}
}

// dnsAnswer answers the DNS query q from names.
func dnsAnswer(q []byte, names map[string]netip.Addr) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(q)
	if err != nil {
		return nil, err
	}
	question, err := p.Question()
	if err != nil {
		return nil, err
	}
	a, ok := names[question.Name.String()]
	rcode := dnsmessage.RCodeSuccess
	if !ok {
		rcode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RCode: rcode})
	b.StartQuestions()
	b.Question(question)
	b.StartAnswers()
	if ok && question.Type == dnsmessage.TypeA {
		b.AResource(dnsmessage.ResourceHeader{Name: question.Name, Class: dnsmessage.ClassINET, TTL: 60}, dnsmessage.AResource{A: a.As4()})
	}
	return b.Finish()
}

// Through a proxy, a request's own host is checked before anything is sent
// to the proxy; the proxy itself, on loopback, is dialled although no Allow
// entry holds it.
func TestTransportProxyChecksTarget(t *testing.T) {
	t.Parallel()
	proxy := newForwardProxy(t)
	d := &Dialer{
		Dialer:         loopbackOnly(),
		AllowAddrPorts: []netip.AddrPort{netip.MustParseAddrPort("10.0.0.5:80")},
		Proxy:          &httpproxy.Config{HTTPProxy: proxy.URL, HTTPSProxy: proxy.URL},
	}
	tr := Transport(d)
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	for _, tc := range []struct {
		url    string
		reason string // "" for a request that reaches the proxy
		seen   string // what the proxy saw of it
	}{
		{"http://8.8.8.8/robots.txt", "", "GET http://8.8.8.8/robots.txt"},
		{"https://8.8.8.8/robots.txt", "", "CONNECT 8.8.8.8:443"},
		{"http://10.0.0.5/sitemap.xml", "", "GET http://10.0.0.5/sitemap.xml"}, // allowed on its port
		{"http://10.0.0.5:6379/", "private", ""},                               // not on another
		{"https://10.0.0.5/", "private", ""},                                   // nor on 443
		{"http://10.0.0.1/", "private", ""},
		{"http://169.254.169.254/latest/meta-data/", "link-local", ""},
		{"http://[::ffff:10.0.0.1]/", "private", ""},
		{"http://public.test/robots.txt", "", "GET http://public.test/robots.txt"}, // a name, resolved here first
		{"http://internal.test/", "private", ""},
		{"http://loop.test:8080/", "loopback", ""},
		{"http://no-such-host.test/", "unresolved", ""},
		// Dialled as public.test, but net/http names it to the proxy in
		// Punycode (xn--…), which does not resolve here.
		{"http://ｐｕｂｌｉｃ.test/", "unresolved", ""},
	} {
		before := len(proxy.requests())
		resp, err := client.Get(tc.url)
		if err == nil {
			resp.Body.Close()
		}
		got := proxy.requests()[before:]
		if tc.reason == "" {
			if !slices.Equal(got, []string{tc.seen}) {
				t.Errorf("Get(%s): the proxy saw %q, want %q (err %v)", tc.url, got, tc.seen, err)
			}
			if errors.Is(err, ErrForbidden) {
				t.Errorf("Get(%s) = %v, want it sent to the proxy", tc.url, err)
			}
			continue
		}
		if len(got) > 0 {
			t.Errorf("Get(%s): the proxy saw %q, want nothing", tc.url, got)
		}
		var ae *AddressError
		if !errors.Is(err, ErrForbidden) || !errors.As(err, &ae) {
			t.Errorf("Get(%s) = %v, want an *AddressError", tc.url, err)
			continue
		}
		if ae.Proxy != proxy.Listener.Addr().String() {
			t.Errorf("Get(%s): AddressError.Proxy = %q, want %q", tc.url, ae.Proxy, proxy.Listener.Addr())
		}
		if tc.reason == "unresolved" {
			var dnsErr *net.DNSError
			if ae.Err == nil || !errors.As(err, &dnsErr) {
				t.Errorf("Get(%s) = %v, want the failed look-up in AddressError.Err", tc.url, err)
			}
		} else if ae.Reason != tc.reason {
			t.Errorf("Get(%s): AddressError %+v, want reason %q", tc.url, ae, tc.reason)
		}
	}
}

// A proxy is asked for the host of the request line, which net/http takes
// from the request's Host (a Host header colly copies there), not from its
// URL: that host is the one judged.
func TestTransportProxyChecksHostHeader(t *testing.T) {
	t.Parallel()
	proxy := newForwardProxy(t)
	d := &Dialer{Dialer: loopbackOnly(), Proxy: &httpproxy.Config{HTTPProxy: proxy.URL}}
	tr := Transport(d)
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodGet, "http://public.test/robots.txt", nil)
	req.Host = "internal.test"
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err == nil {
		resp.Body.Close()
	}
	var ae *AddressError
	if !errors.As(err, &ae) || ae.Reason != "private" {
		t.Errorf("Get(public.test, Host: internal.test) = %v, want an *AddressError, private", err)
	}
	if got := proxy.requests(); len(got) > 0 {
		t.Errorf("the proxy saw %q, want nothing", got)
	}
}

// NO_PROXY sends a request direct, where the dial checks it; a direct
// request to the proxy's own address is checked although the dial to the
// proxy is not.
func TestTransportNoProxy(t *testing.T) {
	t.Parallel()
	proxy := newForwardProxy(t)
	var direct int
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { direct++ }))
	defer site.Close()
	d := &Dialer{
		Dialer: loopbackOnly(),
		Proxy:  &httpproxy.Config{HTTPProxy: proxy.URL, NoProxy: "8.8.4.4"},
	}
	client := &http.Client{Transport: Transport(d)}
	for _, u := range []string{
		"http://8.8.4.4/",               // NO_PROXY: direct, and the test's dialer refuses to leave loopback
		proxy.URL + "/admin",            // loopback is never proxied: direct, to the proxy's own address
		fullWidth(proxy.URL) + "/admin", // the same, written as net/http dials it only after IDNA
		site.URL,                        // direct, to loopback
	} {
		resp, err := client.Get(u)
		if err == nil {
			resp.Body.Close()
			t.Errorf("Get(%s): no error", u)
		}
		if u != "http://8.8.4.4/" && !errors.Is(err, ErrForbidden) {
			t.Errorf("Get(%s) = %v, want ErrForbidden", u, err)
		}
	}
	if got := proxy.requests(); len(got) > 0 {
		t.Errorf("the proxy saw %q, want nothing", got)
	}
	if direct > 0 {
		t.Errorf("the loopback site got %d requests, want 0", direct)
	}
}

// fullWidth returns u, an http URL of an IPv4 host, with the host's digits
// and dots written full-width (U+FF10…, U+FF0E), which IDNA's lookup
// profile maps back to ASCII.
func fullWidth(u string) string {
	rest := strings.TrimPrefix(u, "http://")
	host, port, _ := strings.Cut(rest, ":")
	var b strings.Builder
	for _, r := range host {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r - '0' + '０')
		case r == '.':
			b.WriteRune('．')
		default:
			b.WriteRune(r)
		}
	}
	return "http://" + b.String() + ":" + port
}

// Without Dialer.Proxy, Transport takes the environment's proxy settings,
// read when it is called (not once per process, as
// http.ProxyFromEnvironment reads them).
func TestTransportProxyFromEnvironment(t *testing.T) {
	proxy := newForwardProxy(t)
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	t.Setenv("REQUEST_METHOD", "")
	tr := Transport(&Dialer{Dialer: loopbackOnly()})
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("http://8.8.8.8/robots.txt")
	if err != nil {
		t.Fatalf("Get through HTTP_PROXY=%s: %v", proxy.URL, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "via proxy" {
		t.Errorf("Get through HTTP_PROXY=%s = %q, want the proxy's answer", proxy.URL, body)
	}
	if _, err := (&http.Client{Transport: tr}).Get("http://10.0.0.1/"); !errors.Is(err, ErrForbidden) {
		t.Errorf("Get(http://10.0.0.1/) through HTTP_PROXY = %v, want ErrForbidden", err)
	}
	if got := proxy.requests(); !slices.Equal(got, []string{"GET http://8.8.8.8/robots.txt"}) {
		t.Errorf("the proxy saw %q, want the public request only", got)
	}
}
