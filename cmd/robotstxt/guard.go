package main

import (
	"context"
	"flag"
	"net/http"
	"net/netip"
	"net/url"
	"sync"

	"github.com/robotsmw/robotsmw/netguard"
)

// A robots.txt names sitemaps anywhere, and a redirect may point anywhere:
// the commands that fetch connect to public addresses and to those of the
// sites named on the command line only, each on its own port (netguard), so
// that the tool cannot be turned into a probe of the machine it runs on or
// its network. Proxies are the environment's (HTTP_PROXY, HTTPS_PROXY,
// NO_PROXY): a request through a proxy has its host checked before it is
// sent there. -allow-private lifts the guard.

// allowPrivateFlag is the flag that lifts the guard.
const allowPrivateFlag = "allow-private"

// A guard is what the fetches of one command may connect to.
type guard struct {
	allow []netip.AddrPort // the non-public addresses and ports of the sites named
	once  sync.Once
	t     *http.Transport
}

// guardFor returns the guard of a command whose flags are fs and whose
// positional arguments are args, or nil if the command does not fetch or
// -allow-private was given. The hosts of URL arguments and of URL flag
// values (-base, -robots) are the sites named.
func guardFor(ctx context.Context, fs *flag.FlagSet, args []string) *guard {
	f := fs.Lookup(allowPrivateFlag)
	if f == nil || f.Value.String() == "true" {
		return nil
	}
	args = args[:len(args):len(args)]
	fs.Visit(func(f *flag.Flag) { args = append(args, f.Value.String()) })
	g := &guard{}
	for _, a := range args {
		u, err := url.Parse(a)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			continue
		}
		allow, _ := netguard.AllowSite(ctx, u.String())
		g.allow = append(g.allow, allow...)
	}
	return g
}

// transport returns the guarded transport, one for the whole command so
// that its connections are reused.
func (g *guard) transport() *http.Transport {
	g.once.Do(func() { g.t = netguard.Transport(&netguard.Dialer{AllowAddrPorts: g.allow}) })
	return g.t
}
