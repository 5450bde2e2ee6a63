package policy

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A GroupKind tells which group of a robots.txt decided a request.
type GroupKind uint8

const (
	// GroupNone: no group names the agent and there is no '*' group, so
	// everything is allowed (RFC 9309 §2.2.1).
	GroupNone GroupKind = iota
	// GroupSpecific: a group names the agent's product token.
	GroupSpecific
	// GroupGlobal: the '*' group applied.
	GroupGlobal
)

// String implements fmt.Stringer.
func (k GroupKind) String() string {
	switch k {
	case GroupSpecific:
		return "specific"
	case GroupGlobal:
		return "global"
	}
	return "none"
}

// A Rule is an Allow or Disallow line as written in a robots.txt file.
type Rule struct {
	Allow   bool   // Allow line (true) or Disallow line (false)
	Pattern string // the path pattern as written
	Line    int    // 1-based line number
}

// String implements fmt.Stringer. The pattern is shown as written, but
// for characters a terminal would act on (control characters, bidi
// overrides, bytes that are not UTF-8), which are escaped as Go escapes
// them, and cut after maxPatternShown bytes with "…": a message that
// names a rule can be printed and logged as it is, whatever the site
// wrote.
func (r Rule) String() string {
	key := "disallow"
	if r.Allow {
		key = "allow"
	}
	return fmt.Sprintf("line %d: %s: %s", r.Line, key, shownPattern(r.Pattern))
}

// maxPatternShown is the longest part of a rule's pattern Rule.String
// shows; its line number finds the rest.
const maxPatternShown = 256

// shownPattern returns p for Rule.String: printable characters as they
// are, others escaped, cut after maxPatternShown bytes of p.
func shownPattern(p string) string {
	cut := len(p) > maxPatternShown
	if cut {
		n := maxPatternShown
		for n > maxPatternShown-utf8.UTFMax+1 && !utf8.RuneStart(p[n]) {
			n-- // not into a run of bytes that are not UTF-8
		}
		p = p[:n]
	}
	plain := true
	for _, c := range p {
		if c == utf8.RuneError || !unicode.IsPrint(c) {
			plain = false
			break
		}
	}
	if !plain {
		q := strconv.QuoteToGraphic(p) // escapes what is not graphic, and invalid bytes
		p = strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
	}
	if cut {
		p += "…"
	}
	return p
}

// A Decision explains a verdict of [Robots.Allowed].
type Decision struct {
	Allowed bool
	// Group is the kind of group that applied; Agent is its product token
	// as first written in the file ("*" for the global group, "" for none).
	Group GroupKind
	Agent string
	// Rule is the deciding rule, or nil when no rule of the group matched.
	Rule *Rule
	// Exempt is set for the path /robots.txt, which RFC 9309 §2.2.2 always
	// allows whatever the rules say.
	Exempt bool
}

// String implements fmt.Stringer.
func (d Decision) String() string {
	verdict := "disallowed"
	if d.Allowed {
		verdict = "allowed"
	}
	switch {
	case d.Exempt:
		return "allowed: /robots.txt is always allowed"
	case d.Group == GroupNone:
		return verdict + ": no group applies"
	case d.Rule == nil:
		return fmt.Sprintf("%s: no rule matched in group %q", verdict, d.Agent)
	}
	return fmt.Sprintf("%s by %s (group %q)", verdict, d.Rule, d.Agent)
}

// Explain returns the verdict [Robots.Allowed] gives for agent and u,
// together with the group and the rule that decided it. Operators use it to
// answer "why was this URL blocked?".
func (r *Robots) Explain(agent string, u *url.URL) Decision {
	var buf [512]byte
	target, set := targetOf(buf[:0], u)
	allowed, g, j := r.decide(agent, target, set)
	d := Decision{Allowed: allowed, Exempt: isRobotsTxt(target)}
	if g == nil {
		return d
	}
	d.Agent = g.agent
	d.Group = GroupSpecific
	if r.global > 0 && g == r.groups[r.global-1] {
		d.Group = GroupGlobal
	}
	if j >= 0 {
		rl := &g.idx.rules[j]
		d.Rule = &Rule{Allow: rl.allow, Pattern: rl.raw, Line: int(rl.line)}
	}
	return d
}
