package policy

import (
	"net/url"
	"unsafe"
)

// A Matcher answers [Robots.Allowed] for one agent: the group that
// applies to it is looked up once, and a group of a few plain rules (no
// '*', no '$') is held in the Matcher itself. A crawler that keeps a
// Matcher beside its per-host state checks a URL without reading the
// Robots at all, which matters when a crawl goes round many hosts and
// finds each host's robots.txt cold in the CPU's caches.
//
// The zero Matcher allows everything. A Matcher is a value that does not
// change: copy it freely, use it from any goroutine. It keeps its Robots
// alive.
type Matcher struct {
	g *group // the group that applies; nil: none (everything is allowed)
	// inline says the group's rules are n prefixes in pat, each lens[i]
	// octets long, of priority ord[i] (see rank.ord).
	inline bool
	n      uint8
	lens   [inlineRules]uint8
	ord    [inlineRules]uint16
	pat    [inlineOctets]byte
}

// The most rules, and octets of their patterns, a Matcher holds inline.
const (
	inlineRules  = 4
	inlineOctets = 48
)

// Matcher returns the Matcher of the group that applies to agent, a
// product token (see [Robots.Allowed]).
func (r *Robots) Matcher(agent string) Matcher {
	m := Matcher{g: r.group(agent)}
	if m.g == nil {
		return m
	}
	m.g.once.Do(m.g.compile)
	rules := m.g.idx.rules
	if len(rules) > inlineRules {
		return m
	}
	octets := 0
	for i := range rules {
		rl := &rules[i]
		if int(rl.plen) != len(rl.pattern) {
			return m // a wildcard, or an end anchor
		}
		octets += len(rl.pattern)
	}
	if octets > inlineOctets {
		return m
	}
	off := 0
	for i := range rules {
		rl := &rules[i]
		ord := uint16(rl.prio) << 1
		if rl.allow {
			ord |= 1
		}
		m.lens[i], m.ord[i] = uint8(len(rl.pattern)), ord
		off += copy(m.pat[off:], rl.pattern)
	}
	m.inline, m.n = true, uint8(len(rules))
	return m
}

// Allowed reports whether u may be fetched, as [Robots.Allowed] does for
// the agent m was made for.
//
// Allowed does not allocate for targets up to a few hundred bytes.
func (m *Matcher) Allowed(u *url.URL) bool {
	if target, set, ok := plainTarget(u); ok {
		return m.allows(target, set)
	}
	// Most often: a plain path and a short plain query, joined in a buffer
	// that is cheap to clear.
	const short = 128
	p, q := u.Path, u.RawQuery
	if u.Opaque == "" && u.RawPath == "" && p != "" && p[0] == '/' && len(p)+len(q) < short {
		if sum := summarize(p, &pathOctets) | summarize(q, &targetOctets); sum&notPlain == 0 {
			var buf [short]byte
			n := copy(buf[:], p)
			buf[n] = '?'
			n += 1 + copy(buf[n+1:], q)
			return m.allows(unsafe.String(&buf[0], n), octetSet(sum)|queryOctet)
		}
	}
	var buf [512]byte
	target, set := builtTarget(buf[:0], u)
	return m.allows(target, set)
}

// allows returns the verdict for a normalised target whose octets set
// summarises.
func (m *Matcher) allows(target string, set octetSet) bool {
	if !m.inline {
		allowed, _ := decideIn(m.g, target, set)
		return allowed
	}
	if isRobotsTxt(target) {
		return true
	}
	// The longest matching prefix decides, Allow on a tie (RFC 9309
	// §2.2.2): the greatest ord.
	best, off := -1, 0
	for i := range int(m.n) {
		l := int(m.lens[i])
		if len(target) >= l && target[:l] == unsafe.String(&m.pat[off], l) {
			best = max(best, int(m.ord[i]))
		}
		off += l
	}
	return best < 0 || best&1 != 0
}
