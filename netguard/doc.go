// Package netguard keeps a crawler out of the networks it runs in.
//
// A crawler fetches URLs that strangers write: a robots.txt Sitemap line, a
// sitemap's <loc>, a redirect's Location, a link on a page. Any of them can
// name http://127.0.0.1:6379/, http://169.254.169.254/latest/meta-data/ or
// a host name that resolves to 10.0.0.1, and a crawler that follows them
// becomes a probe of its own machine and network (server-side request
// forgery). Dialer refuses such connections where it cannot be fooled: on
// the address the connection is about to be made to, after DNS resolution,
// so a name that resolves to a public address once and a private one the
// next time (DNS rebinding) is refused too.
//
// With colly, install the guarded transport before the Guard, which wraps
// the transport it finds:
//
//	c := colly.NewCollector()
//	c.WithTransport(netguard.Transport(nil))
//	g.Attach(c)
//
// With Guard.Transport or any net/http client:
//
//	client := &http.Client{Transport: g.Transport(netguard.Transport(nil))}
//
// For a crawl of one site on this machine or an intranet, SiteTransport
// (AllowSite) allows that site's own address on its own port, and nothing
// else that is not public: a Sitemap line or a redirect to another port of
// the same address (http://127.0.0.1:6379/) is refused as any other
// private address is.
//
// Transport honours the environment's proxy settings (HTTP_PROXY,
// HTTPS_PROXY, NO_PROXY), as curl and Go's default transport do. Through a
// proxy the connection goes to the proxy, which connects to the request's
// host on the crawler's behalf, so the dial check cannot see where the
// request ends up: the request's host is checked instead, resolved here,
// before anything is sent to the proxy, and the proxy itself is dialled
// unchecked, as the operator chose it. A request that should go through a
// proxy never goes direct.
package netguard
