package robotsmw

import (
	"path"

	"golang.org/x/time/rate"
)

// A HostRule sets the pace of the hosts it names (Guard.Hosts).
type HostRule struct {
	// Host names the hosts: a host name ("shop.example.com", matched
	// as the Guard's host key: lower case, without port or trailing dot,
	// punycode) or a pattern of path.Match ("*.example.com" names every
	// subdomain, "*" every host). An empty Host or a pattern that
	// path.Match rejects is refused (Attach panics).
	Host string
	// Rate replaces Guard.Rate for these hosts: rate.Inf for no limit
	// but Crawl-delay and back-off; zero means Guard.Rate; negative is
	// refused.
	Rate rate.Limit
	// InFlight replaces Guard.InFlight for these hosts; zero means
	// Guard.InFlight; negative is refused.
	InFlight int
}

// hostRule returns the first of the Guard's HostRules that names the host
// name, or nil.
func (g *Guard) hostRule(name string) *HostRule {
	for i := range g.Hosts {
		r := &g.Hosts[i]
		if r.Host == name {
			return r
		}
		if ok, err := path.Match(r.Host, name); ok && err == nil {
			return r
		}
	}
	return nil
}
