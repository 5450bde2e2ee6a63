package policy

import (
	"cmp"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// A Robots is a parsed and compiled robots.txt file.
//
// The zero Robots, like a nil *Robots, has no rules and allows everything.
// A Robots is immutable after [Parse] returns it and is safe for concurrent
// use by multiple goroutines.
type Robots struct {
	groups []group
	// agents maps a lower-case product token to its merged group in groups.
	agents map[string]int32
	// global is 1 + the index of the merged '*' group, or 0 when there is none.
	global int32

	sitemaps    []string
	cleanParams []CleanParam
	// text holds the patterns and values the rules refer to, in one block.
	text string
}

// A group is the merged set of records that name one product token, or the
// merged '*' records (RFC 9309 §2.2.1).
type group struct {
	agent string // the token as first written, or "*"
	// rules are sorted by priority, highest first, allow before disallow on
	// equal priority; so the first rule that matches decides.
	rules    []rule
	delay    time.Duration
	hasDelay bool
}

// A rule is one compiled Allow or Disallow line.
type rule struct {
	pattern string // normalised; its length is the rule's priority
	raw     string // the path as written in the file
	line    int32
	allow   bool
}

// A CleanParam is a Yandex Clean-param line: URL query parameters that do
// not change a page's content, optionally limited to paths starting with
// Path. Clean-param lines belong to no group.
type CleanParam struct {
	Params []string // parameter names, as written between '&'
	Path   string   // path prefix as written; "" means every path
	Line   int      // 1-based line number
}

// Parse parses and compiles a robots.txt body. It never fails: lines that
// are not valid directives are ignored (RFC 9309 §2.2), and bytes past
// [MaxSize] are not read. Use [Lint] to learn what was ignored.
//
// The result does not refer to body, which the caller may reuse.
func Parse(body []byte) *Robots {
	var b builder
	parse(body, &b)
	return b.finish()
}

// Allowed reports whether the crawler whose product token is agent may fetch
// u. u may be absolute or hold just a path and query; its host is not looked
// at, so the caller must pass URLs of the origin the file was fetched from.
//
// agent is compared whole and without regard to ASCII case with the product
// tokens of the file's User-agent lines (RFC 9309 §2.2.1); pass
// [ProductToken] of a full User-Agent header. The most specific rule of the
// one group that applies decides, and ties go to Allow (RFC 9309 §2.2.2).
// "/robots.txt" is always allowed.
//
// Allowed does not allocate for targets up to a few hundred bytes.
func (r *Robots) Allowed(agent string, u *url.URL) bool {
	var buf [512]byte
	allowed, _, _ := r.decide(agent, appendTarget(buf[:0], u))
	return allowed
}

// decide returns the verdict for a normalised target, the group that
// applied (nil for none) and the deciding rule (nil for none).
func (r *Robots) decide(agent string, target []byte) (bool, *group, *rule) {
	g := r.group(agent)
	if g == nil || isRobotsTxt(target) {
		return true, g, nil
	}
	// target is neither kept nor changed while t is in use.
	t := unsafe.String(unsafe.SliceData(target), len(target))
	for i := range g.rules {
		if match(g.rules[i].pattern, t) {
			return g.rules[i].allow, g, &g.rules[i]
		}
	}
	return true, g, nil
}

// isRobotsTxt reports whether the target's path is "/robots.txt", which
// RFC 9309 §2.2.2 always allows.
func isRobotsTxt(target []byte) bool {
	const p = "/robots.txt"
	return len(target) >= len(p) && string(target[:len(p)]) == p &&
		(len(target) == len(p) || target[len(p)] == '?')
}

// group returns the group that applies to agent: the merged group naming
// its product token, else the merged '*' group, else nil.
//
// RFC 9309 §2.2.1: a group naming the agent hides the '*' group even when it
// has no rules, or no rule that matches.
func (r *Robots) group(agent string) *group {
	if r == nil {
		return nil
	}
	if len(r.agents) > 0 {
		var buf [64]byte
		if i, ok := r.agents[string(appendLower(buf[:0], agent))]; ok {
			return &r.groups[i]
		}
	}
	if r.global > 0 {
		return &r.groups[r.global-1]
	}
	return nil
}

// CrawlDelay returns the Crawl-delay of the group that applies to agent and
// whether that group sets one. Crawl-delay is not part of RFC 9309 and
// Google ignores it; Bing and Yandex honour it as the minimum time between
// two requests (ROBOTS.md §12). Values are seconds, decimals allowed;
// negative or malformed values are ignored; when a merged group has several,
// the largest wins. Values too large for a time.Duration are clamped to it.
func (r *Robots) CrawlDelay(agent string) (time.Duration, bool) {
	g := r.group(agent)
	if g == nil {
		return 0, false
	}
	return g.delay, g.hasDelay
}

// Sitemaps returns the values of the file's Sitemap lines in file order, as
// written. Sitemap lines belong to no group (RFC 9309 §2.2.4, ROBOTS.md §10);
// the values are not checked or resolved. The caller must not modify the
// returned slice.
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

// A builder is the handler that compiles a Robots.
type builder struct {
	r Robots
	// members are the indexes of the groups the current record adds to.
	members []int32
	// inRules is set once the current record has an Allow or Disallow line,
	// so that the next User-agent line starts a new record.
	inRules bool
	// text collects every string the Robots keeps; pending rules refer to
	// it by offset until finish makes it one string.
	text  []byte
	rules [][]pendingRule // per group
}

type pendingRule struct {
	pat, raw span
	line     int32
	allow    bool
}

type span struct{ off, len int32 }

func (b *builder) keep(s []byte) span {
	sp := span{int32(len(b.text)), int32(len(s))}
	b.text = append(b.text, s...)
	return sp
}

// groupFor returns the index of the group for a lower-case token, creating it.
func (b *builder) groupFor(token []byte, global bool) int32 {
	if global {
		if b.r.global == 0 {
			b.r.groups = append(b.r.groups, group{agent: "*"})
			b.rules = append(b.rules, nil)
			b.r.global = int32(len(b.r.groups))
		}
		return b.r.global - 1
	}
	key := string(appendLower(make([]byte, 0, len(token)), string(token)))
	if i, ok := b.r.agents[key]; ok {
		return i
	}
	if b.r.agents == nil {
		b.r.agents = make(map[string]int32)
	}
	i := int32(len(b.r.groups))
	b.r.agents[key] = i
	b.r.groups = append(b.r.groups, group{agent: string(token)})
	b.rules = append(b.rules, nil)
	return i
}

func (b *builder) userAgent(_ lineInfo, value []byte) {
	// RFC 9309 §2.1: consecutive user-agent lines form one record; one that
	// follows a rule starts the next.
	if b.inRules {
		b.members = b.members[:0]
		b.inRules = false
	}
	var i int32
	if isGlobalAgent(value) {
		i = b.groupFor(nil, true)
	} else {
		i = b.groupFor([]byte(tokenPrefix(string(value))), false)
	}
	if !slices.Contains(b.members, i) {
		b.members = append(b.members, i)
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
		// ROBOTS.md §12: such a path can never match (RFC 9309 grammar).
		return
	}
	raw := b.keep(value)
	pat := raw
	if !normal(string(value)) {
		start := len(b.text)
		b.text = appendNormal(b.text, string(value))
		pat = span{int32(start), int32(len(b.text) - start)}
	}
	b.add(pendingRule{pat: pat, raw: raw, line: int32(ln.num), allow: allow})
	if allow {
		// Google-specific: "Allow: /a/index.htm(l)" also allows "/a/", as if
		// the rule "/a/$" were written on the same line.
		p := b.text[pat.off : pat.off+pat.len]
		if s := lastSlash(p); s >= 0 && strings.HasPrefix(string(p[s:]), "/index.htm") {
			start := len(b.text)
			b.text = append(b.text, p[:s+1]...)
			b.text = append(b.text, '$')
			b.add(pendingRule{pat: span{int32(start), int32(s + 2)}, raw: raw, line: int32(ln.num), allow: true})
		}
	}
}

func lastSlash(p []byte) int {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return i
		}
	}
	return -1
}

func (b *builder) add(pr pendingRule) {
	for _, i := range b.members {
		b.rules[i] = append(b.rules[i], pr)
	}
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
		for _, i := range b.members {
			g := &b.r.groups[i]
			if !g.hasDelay || d > g.delay {
				g.delay, g.hasDelay = d, true
			}
		}
	case hasPrefixFold(key, "clean-param"):
		if cp, ok := parseCleanParam(value); ok {
			cp.Line = ln.num
			b.r.cleanParams = append(b.r.cleanParams, cp)
		}
	}
}

func (b *builder) invalid(lineInfo, []byte) {}

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

// parseCleanParam reads "p1&p2 [/prefix]" (Yandex).
func parseCleanParam(value []byte) (CleanParam, bool) {
	fields := strings.Fields(string(value))
	if len(fields) == 0 || len(fields) > 2 {
		return CleanParam{}, false
	}
	var cp CleanParam
	for _, p := range strings.Split(fields[0], "&") {
		if p == "" {
			return CleanParam{}, false
		}
		cp.Params = append(cp.Params, p)
	}
	if len(fields) == 2 {
		cp.Path = fields[1]
	}
	return cp, true
}

// finish freezes the collected text into one string and sorts every group's
// rules by priority.
func (b *builder) finish() *Robots {
	r := &b.r
	r.text = string(b.text)
	str := func(s span) string { return r.text[s.off : s.off+s.len] }
	for i := range r.groups {
		pending := b.rules[i]
		if len(pending) == 0 {
			continue
		}
		rules := make([]rule, len(pending))
		for j, pr := range pending {
			rules[j] = rule{pattern: str(pr.pat), raw: str(pr.raw), line: pr.line, allow: pr.allow}
		}
		// RFC 9309 §2.2.2: the longest match wins, allow on a tie. Priority
		// is the octet length of the normalised pattern, '*' and '$'
		// included (Google-specific measure).
		slices.SortStableFunc(rules, func(a, b rule) int {
			if c := cmp.Compare(len(b.pattern), len(a.pattern)); c != 0 {
				return c
			}
			if a.allow != b.allow {
				if a.allow {
					return -1
				}
				return 1
			}
			return 0
		})
		r.groups[i].rules = rules
	}
	return r
}

// disallowAll returns a policy that disallows every path but /robots.txt:
// what RFC 9309 §2.3.1.4 prescribes while robots.txt is unreachable.
func disallowAll() *Robots {
	return &Robots{
		groups: []group{{agent: "*", rules: []rule{{pattern: "/", raw: "/", allow: false}}}},
		global: 1,
		text:   "/",
	}
}
