package policy

import (
	"bytes"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// A Robots is a parsed robots.txt file.
//
// The zero Robots, like a nil *Robots, has no rules and allows everything.
// A Robots is immutable after [Parse] returns it (each group's lookup index
// is built once, on its first query) and is safe for concurrent use by
// multiple goroutines.
type Robots struct {
	groups []*group
	// agents is an open-addressed hash table of the groups naming product
	// tokens (see agentSlot). Its length is a power of two, at least twice
	// the number of tokens.
	agents []agentSlot
	// global is 1 + the index of the merged '*' group, or 0 when there is none.
	global int32
	// star is that group, or nil: a look-up for an agent no group names
	// reads it here, without the groups' array.
	star *group

	sitemaps    []string
	cleanParams []CleanParam
}

// A group is the merged set of records that name one product token, or the
// merged '*' records (RFC 9309 §2.2.1).
//
// A decision reads once and the start of idx: they come first, so that
// it reads few cache lines of a group that is not in the CPU's caches.
type group struct {
	once sync.Once
	idx  index

	id       int32  // index in Robots.groups
	agent    string // the token as first written, or "*"
	delay    time.Duration
	hasDelay bool

	// text holds the parsed body; pending are the group's rules as spans of
	// it, in file order, until compile turns them into idx.
	text    string
	pending []pendingRule
}

// A pendingRule is an Allow or Disallow line not yet compiled.
type pendingRule struct {
	off, len int32 // the path as written, in group.text
	line     int32
	allow    bool
}

// Parse parses and compiles a robots.txt body. It never fails: lines that
// are not valid directives are ignored (RFC 9309 §2.2), and bytes past
// [MaxSize] are not read. Use [Lint] to learn what was ignored.
//
// The result does not refer to body, which the caller may reuse.
func Parse(body []byte) *Robots {
	body = prepare(body)
	b := builder{text: string(body), base: cap(body)}
	// At most one rule a line: a cheap bound that saves regrowing.
	n := min(bytes.Count(body, []byte{'\n'})+1, 1<<16)
	b.rules, b.owners = make([]pendingRule, 0, n), make([]int32, 0, n)
	tokenize(body, &b)
	b.finish()
	return &b.r
}

// Allowed reports whether the crawler whose product token is agent may fetch
// u. u may be absolute or hold just a path and query; its host is not looked
// at, so the caller must pass URLs of the origin the file was fetched from.
//
// A URL without a scheme is read as Google reads it, with its first
// component for the host (Google-specific: robots.cc GetPathParamsQuery,
// GetPathParamsQuery in Google's robots.cc): url.Parse makes "example.com/private"
// a relative path, and Allowed checks the path "/private" (and "/" for
// "example.com"), never "/example.com/private". The same goes for opaque
// URLs: url.Parse makes "example.com:8080/private" the scheme
// "example.com" with opaque data "8080/private", checked as "/private",
// and "mailto:x" is checked as "/". Opaque data "//host/path" is read as
// "/path".
//
// agent is compared whole and without regard to ASCII case with the product
// tokens of the file's User-agent lines (RFC 9309 §2.2.1); pass
// [ProductToken] of a full User-Agent header. The most specific rule of the
// one group that applies decides, and ties go to Allow (RFC 9309 §2.2.2).
// "/robots.txt" is always allowed.
//
// Allowed does not allocate for targets up to a few hundred bytes.
func (r *Robots) Allowed(agent string, u *url.URL) bool {
	m := Matcher{g: r.group(agent)}
	return m.Allowed(u)
}

// decide returns the verdict for a normalised target whose octets set
// summarises, the group that applied (nil for none) and the deciding
// rule's index in the group's g.idx.rules (-1 for none).
func (r *Robots) decide(agent string, target string, set octetSet) (bool, *group, int32) {
	g := r.group(agent)
	allowed, j := decideIn(g, target, set)
	return allowed, g, j
}

// decideIn returns the verdict of g (nil: no group applies) for a
// normalised target whose octets set summarises, and the deciding rule's
// index in g.idx.rules (-1 for none).
func decideIn(g *group, target string, set octetSet) (bool, int32) {
	if g == nil || isRobotsTxt(target) {
		return true, -1
	}
	g.once.Do(g.compile)
	x := &g.idx
	j := x.scan(x.find(target), target, set) // x.lookup, one call fewer
	if j < 0 {
		return true, -1
	}
	return g.idx.allows(j), j
}

// isRobotsTxt reports whether the target's path is "/robots.txt", which
// RFC 9309 §2.2.2 always allows.
func isRobotsTxt(target string) bool {
	const p = "/robots.txt"
	return len(target) >= len(p) && target[:len(p)] == p &&
		(len(target) == len(p) || target[len(p)] == '?')
}

// MaxCrawlDelay is the longest Crawl-delay a polite crawler is expected
// to honour as written: Heritrix and crawler-commons cap it at 300 s. A
// robotsmw Guard does not crawl a host asking for more unless told to
// honour it as MaxCrawlDelay (Guard.ClampCrawlDelay).
const MaxCrawlDelay = 300 * time.Second

// CrawlDelay returns the Crawl-delay of the group that applies to agent and
// whether that group sets one. Crawl-delay is not part of RFC 9309 and
// Google ignores it; Bing reads it, and Yandex defined it as the wait after
// one page before the next (docs/robots-semantics.md#crawl-delay). A
// Crawl-delay line applies to the user-agent lines above it in its record.
// Values are seconds, decimals allowed; negative or malformed values are
// ignored; when a merged group has several, the largest wins. Values too
// large for a time.Duration are clamped to it.
func (r *Robots) CrawlDelay(agent string) (time.Duration, bool) {
	g := r.group(agent)
	if g == nil {
		return 0, false
	}
	return g.delay, g.hasDelay
}

// Sitemaps returns the values of the file's Sitemap lines in file order, as
// written. Sitemap lines belong to no group (RFC 9309 §2.2.4; sitemaps.org,
// https://www.sitemaps.org/protocol.html#submit_robots);
// the values are not checked or resolved, and may hold bytes that are not
// UTF-8 (sitemap.FromRobots leaves those out, and Lint reports them). The
// caller must not modify the returned slice.
func (r *Robots) Sitemaps() []string {
	if r == nil {
		return nil
	}
	return r.sitemaps
}

// CleanParams returns the file's Yandex Clean-param lines in file order.
// Lines without parameters are left out ([Lint] reports them). The caller
// must not modify the returned slice.
func (r *Robots) CleanParams() []CleanParam {
	if r == nil {
		return nil
	}
	return r.cleanParams
}

// A builder is the handler that builds a Robots.
type builder struct {
	r Robots
	// text is the body being parsed, as the one string every group refers
	// to; base is the capacity of the body slice the tokenizer reads.
	text string
	base int
	// members are the groups the current record adds to.
	members []*group
	// inRules is set once the current record has an Allow or Disallow line,
	// so that the next User-agent line starts a new record.
	inRules bool
	// rules are the rules of every group, in file order, until finish
	// hands each group its own; owners[i] is the id of rules[i]'s group.
	rules  []pendingRule
	owners []int32
}

// groupFor returns the group for a product token, creating it.
func (b *builder) groupFor(token []byte, global bool) *group {
	if global {
		if b.r.global == 0 {
			b.r.groups = append(b.r.groups, &group{id: int32(len(b.r.groups)), agent: "*", text: b.text})
			b.r.global = int32(len(b.r.groups))
			b.r.star = b.r.groups[b.r.global-1]
		}
		return b.r.groups[b.r.global-1]
	}
	if g := b.r.group(string(token)); g != nil && g.agent != "*" {
		return g
	}
	g := &group{id: int32(len(b.r.groups)), agent: string(token), text: b.text}
	b.r.groups = append(b.r.groups, g)
	b.r.addAgent(g)
	return g
}

func (b *builder) userAgent(_ lineInfo, value []byte) {
	// RFC 9309 §2.1: consecutive user-agent lines form one record; one that
	// follows a rule starts the next.
	if b.inRules {
		b.members = b.members[:0]
		b.inRules = false
	}
	var g *group
	if isGlobalAgent(value) {
		g = b.groupFor(nil, true)
	} else {
		g = b.groupFor(tokenPrefix(value), false)
	}
	if !slices.Contains(b.members, g) {
		b.members = append(b.members, g)
	}
}

func (b *builder) rule(ln lineInfo, allow bool, value []byte) {
	if len(b.members) == 0 {
		return // RFC 9309 §2.1: rules before any user-agent line are ignored.
	}
	b.inRules = true // an empty rule still ends the record's user-agent lines
	if len(value) == 0 {
		return // RFC 9309 §2.2.2: a rule without a path is ignored.
	}
	if value[0] != '/' && value[0] != '*' {
		// docs/robots-semantics.md#rule-paths: such a path can never match
		// (RFC 9309 §2.2 grammar).
		return
	}
	pr := pendingRule{off: b.offset(value), len: int32(len(value)), line: int32(ln.num), allow: allow}
	for _, g := range b.members {
		b.rules = append(b.rules, pr)
		b.owners = append(b.owners, g.id)
	}
}

// finish gives every group its pending rules, all in one allocation of
// exactly their number.
func (b *builder) finish() {
	if len(b.rules) == 0 {
		return
	}
	all := make([]pendingRule, len(b.rules))
	groups := b.r.groups
	// A counting sort by group, which keeps file order within each.
	end := make([]int, len(groups)) // first counts, then end offsets
	for _, g := range b.owners {
		end[g]++
	}
	for i := 1; i < len(end); i++ {
		end[i] += end[i-1]
	}
	for i := len(b.rules) - 1; i >= 0; i-- {
		g := b.owners[i]
		end[g]--
		all[end[g]] = b.rules[i]
	}
	for g, grp := range groups {
		hi := len(all)
		if g+1 < len(end) {
			hi = end[g+1]
		}
		grp.pending = all[end[g]:hi:hi]
	}
}

// offset returns where value starts in b.text. The tokenizer hands out
// re-slices of the body it reads, whose capacity shrinks by their offset.
func (b *builder) offset(value []byte) int32 {
	return int32(b.base - cap(value))
}

func (b *builder) sitemap(_ lineInfo, value []byte) {
	if len(value) > 0 {
		b.r.sitemaps = append(b.r.sitemaps, string(value))
	}
}

func (b *builder) other(ln lineInfo, key, value []byte) {
	switch {
	case hasPrefixFold(key, "crawl-delay"):
		d, ok := parseDelay(value)
		if !ok {
			return
		}
		// Not in RFC 9309. A Crawl-delay line applies to the user-agent
		// lines above it in its record, not to later ones: real files put
		// "User-agent: * / Crawl-delay: 10" just before a group of their
		// own, and mean the delay for '*' only.
		for _, g := range b.members {
			g.setDelay(d)
		}
	case hasPrefixFold(key, "clean-param"):
		if cp, ok := parseCleanParam(value); ok {
			cp.Line = ln.num
			b.r.cleanParams = append(b.r.cleanParams, cp)
		}
	}
}

func (b *builder) invalid(lineInfo, []byte) {}

// setDelay raises the group's Crawl-delay to d; merged groups keep the
// largest.
func (g *group) setDelay(d time.Duration) {
	if !g.hasDelay || d > g.delay {
		g.delay, g.hasDelay = d, true
	}
}

// parseDelay reads a Crawl-delay value in seconds.
func parseDelay(value []byte) (time.Duration, bool) {
	f, err := strconv.ParseFloat(string(value), 64)
	if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	if f >= float64(math.MaxInt64)/float64(time.Second) {
		return time.Duration(math.MaxInt64), true
	}
	return time.Duration(f * float64(time.Second)), true
}

// compile turns the group's pending rules into its lookup index.
func (g *group) compile() {
	rules := make([]rule, 0, len(g.pending))
	for _, pr := range g.pending {
		raw := g.text[pr.off : pr.off+pr.len]
		pattern := compilePattern(raw)
		// Google-specific: priority is the octet length of the pattern
		// normalised as RFC 9309 §2.2.2 says, '*' and '$' included: that
		// of written, in which a '$' that does not end the pattern is one
		// octet, not the "%24" that pattern matches it as.
		written := raw
		if !normal(raw, &patternOctets) {
			b := appendNormal(nil, raw, &patternOctets)
			written = unsafe.String(unsafe.SliceData(b), len(b))
		}
		rules = append(rules, newRule(pattern, raw, len(written), pr))
		if pr.allow {
			// Google-specific: "Allow: /a/index.htm(l)" also allows "/a/", as
			// if the rule "/a/$" were written on the same line. robots.cc
			// HandleAllow builds that pattern from the one written (its
			// octets up to and including the last '/', then '$') and hands
			// it to itself, so its priority is that pattern's length as
			// written: "Allow: /$/index.html" implies "/$/$", of priority
			// 4, not 6 as the "/%24/$" it is matched as, and it loses to
			// "Disallow: /$/*$" (5) on "/$/" (Google's robots.cc, "Priority
			// and decision"). written and pattern differ only in '$', so
			// their last '/' is the same one.
			if s := strings.LastIndexByte(pattern, '/'); s >= 0 && strings.HasPrefix(pattern[s:], "/index.htm") {
				rules = append(rules, newRule(pattern[:s+1]+"$", raw, strings.LastIndexByte(written, '/')+2, pr))
			}
		}
	}
	g.idx = newIndex(rules)
	g.pending = nil
}

// compilePattern normalises a rule path for matching (RFC 9309 §2.2.2) and
// encodes every '$' but a final one, which alone anchors the end
// (RFC 9309 §2.2.3); targets carry '$' encoded too.
func compilePattern(raw string) string {
	if normal(raw, &targetOctets) {
		return raw // no '%', '*', '$' or octet to encode
	}
	b := appendNormal(make([]byte, 0, len(raw)+8), raw, &patternOctets)
	end := len(b) > 0 && b[len(b)-1] == '$'
	if end {
		b = b[:len(b)-1]
	}
	if bytes.IndexByte(b, '$') >= 0 {
		b = bytes.ReplaceAll(b, []byte("$"), []byte("%24"))
	}
	if end {
		b = append(b, '$')
	}
	return string(b)
}

func newRule(pattern, raw string, prio int, pr pendingRule) rule {
	return rule{pattern: pattern, raw: raw, prio: int32(prio), plen: int32(literalPrefix(pattern)), line: pr.line, allow: pr.allow}
}

// disallowAll returns a policy that disallows every path but /robots.txt:
// what RFC 9309 §2.3.1.4 prescribes while robots.txt is unreachable.
func disallowAll() *Robots {
	star := &group{agent: "*", text: "/", pending: []pendingRule{{len: 1}}}
	return &Robots{groups: []*group{star}, global: 1, star: star}
}
