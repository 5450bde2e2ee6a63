package policy

import (
	"cmp"
	"slices"
	"strings"
)

// An index is a group's rules compiled for lookup.
//
// Every pattern is split into its literal prefix (up to the first '*', or
// without a final '$') and the rest. The distinct prefixes are kept sorted,
// each with a link to the longest other prefix it starts with. The
// prefixes that start a target are then found by one binary search (the
// greatest prefix not above the target) and a walk up those links: every
// prefix of the target is on that chain, because everything sorted between
// a prefix of t and t itself starts with that prefix. Only the rules of the
// prefixes on the chain are tried, highest priority first.
type index struct {
	prefixes []string // sorted, distinct literal prefixes
	// keys[i] is key8(prefixes[i]): the binary search compares these first.
	keys   []uint64
	parent []int32 // longest other prefix that prefixes[i] starts with, or -1
	// start[i]:start[i+1] are the rules of prefixes[i], in decision order:
	// priority descending, allow before disallow, then file order.
	start []int32
	rules []rule
	// needs[j] is rules[j].need, kept apart so that skipping wildcard
	// rules touches little memory.
	needs []octetSet
}

// key8 packs the first eight octets of s, big-endian, zero-padded. Since a
// normalised string never holds a NUL octet, key8(a) < key8(b) implies
// a < b, and a > b likewise.
func key8(s string) uint64 {
	var k uint64
	for i := 0; i < 8; i++ {
		k <<= 8
		if i < len(s) {
			k |= uint64(s[i])
		}
	}
	return k
}

// A rule is one compiled Allow or Disallow pattern.
type rule struct {
	pattern string // normalised for matching (see compilePattern)
	raw     string // as written in the file
	prio    int32  // priority: the longer, the more specific
	plen    int32  // length of the literal prefix of pattern
	line    int32
	allow   bool
	// need holds the octets the pattern's wildcard part requires; a target
	// lacking one of them cannot match. Zero when there is no wildcard part.
	need octetSet
}

// An octetSet is a set of ASCII octets. Normalised patterns and targets are
// pure ASCII: every other octet is percent-encoded.
type octetSet [2]uint64

// covers reports whether every octet of t is in s.
func (s *octetSet) covers(t *octetSet) bool { return t[0]&^s[0] == 0 && t[1]&^s[1] == 0 }

func octetsOf(str string) octetSet {
	var lo, hi uint64
	for i := 0; i < len(str); i++ {
		c := str[i]
		bit := uint64(1) << (c & 63)
		below := uint64(c>>6&1) - 1 // all ones when c < 64
		lo |= bit & below
		hi |= bit &^ below
	}
	return octetSet{lo, hi}
}

// literalPrefix returns the length of the part of a normalised pattern that
// must match the start of a target octet for octet.
func literalPrefix(pattern string) int {
	if i := strings.IndexByte(pattern, '*'); i >= 0 {
		return i
	}
	if strings.HasSuffix(pattern, "$") {
		return len(pattern) - 1
	}
	return len(pattern)
}

// newIndex sorts rules into decision order by literal prefix and links the
// prefixes.
func newIndex(rules []rule) index {
	// Sort small items rather than rules: the first eight octets of each
	// literal prefix decide most comparisons without touching the rules.
	type item struct {
		key uint64
		i   int32
	}
	items := make([]item, len(rules))
	for i := range rules {
		items[i] = item{key8(rules[i].pattern[:rules[i].plen]), int32(i)}
	}
	byPrefix := func(a, b item) int {
		if a.key != b.key {
			return cmp.Compare(a.key, b.key)
		}
		return compareRules(&rules[a.i], &rules[b.i])
	}
	if !slices.IsSortedFunc(items, byPrefix) { // large files often are
		slices.SortFunc(items, byPrefix)
	}
	sorted := make([]rule, len(rules))
	for j, it := range items {
		sorted[j] = rules[it.i]
	}
	rules = sorted
	n := len(rules) + 1 // an upper bound on the prefixes, plus start's end
	x := index{
		rules:    rules,
		prefixes: make([]string, 0, n),
		keys:     make([]uint64, 0, n),
		parent:   make([]int32, 0, n),
		start:    make([]int32, 0, n),
	}
	var stack []int32 // prefixes that start the current one, shortest first
	for i := range rules {
		p := rules[i].pattern[:rules[i].plen]
		if n := len(x.prefixes); n > 0 && x.prefixes[n-1] == p {
			continue
		}
		for len(stack) > 0 && !strings.HasPrefix(p, x.prefixes[stack[len(stack)-1]]) {
			stack = stack[:len(stack)-1]
		}
		parent := int32(-1)
		if len(stack) > 0 {
			parent = stack[len(stack)-1]
		}
		stack = append(stack, int32(len(x.prefixes)))
		x.prefixes = append(x.prefixes, p)
		x.keys = append(x.keys, key8(p))
		x.parent = append(x.parent, parent)
		x.start = append(x.start, int32(i))
	}
	x.start = append(x.start, int32(len(rules)))
	x.needs = make([]octetSet, len(rules))
	for j := range rules {
		x.needs[j] = rules[j].need
	}
	return x
}

// compareRules orders rules by literal prefix, then in decision order.
func compareRules(a, b *rule) int {
	if c := strings.Compare(a.pattern[:a.plen], b.pattern[:b.plen]); c != 0 {
		return c
	}
	// RFC 9309 §2.2.2: the longest match wins, allow on a tie.
	// Google-specific: length counts octets of the normalised pattern,
	// '*' and '$' included.
	if c := cmp.Compare(b.prio, a.prio); c != 0 {
		return c
	}
	if a.allow != b.allow {
		if a.allow {
			return -1
		}
		return 1
	}
	return cmp.Compare(a.line, b.line)
}

// lookup returns the rule that decides target, or nil when none matches.
func (x *index) lookup(target string) *rule {
	// The greatest prefix that is not above target: found by key, and by
	// string only among the prefixes that share target's key.
	tk := key8(target)
	lo, hi := 0, len(x.keys)
	for lo < hi {
		if m := int(uint(lo+hi) >> 1); x.keys[m] <= tk {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo > 0 && x.keys[lo-1] == tk {
		first, last := lo-1, lo // prefixes[first:last] share target's key
		for a := 0; a < first; {
			if m := int(uint(a+first) >> 1); x.keys[m] < tk {
				a = m + 1
			} else {
				first = m
			}
		}
		for lo = first; lo < last; {
			if m := int(uint(lo+last) >> 1); x.prefixes[m] <= target {
				lo = m + 1
			} else {
				last = m
			}
		}
	}
	i := int32(lo - 1)
	if i >= 0 && !strings.HasPrefix(target, x.prefixes[i]) {
		// Climb to the prefixes of prefixes[i] that also start target.
		p := x.prefixes[i]
		n := 0
		for n < len(p) && n < len(target) && p[n] == target[n] {
			n++
		}
		for i >= 0 && len(x.prefixes[i]) > n {
			i = x.parent[i]
		}
	}
	var best *rule
	var have octetSet // the octets of target, once a wildcard rule needs them
	haveDone := false
	for ; i >= 0; i = x.parent[i] {
		tail := target[len(x.prefixes[i]):]
		for j := x.start[i]; j < x.start[i+1]; j++ {
			r := &x.rules[j]
			if best != nil && (r.prio < best.prio || r.prio == best.prio && (best.allow || !r.allow)) {
				break // neither this rule nor any later one of the prefix can win
			}
			if need := &x.needs[j]; *need != (octetSet{}) {
				if !haveDone {
					have, haveDone = octetsOf(target), true
				}
				if !have.covers(need) {
					continue
				}
			}
			if r.matchTail(tail) {
				best = r
				break
			}
		}
	}
	return best
}

// matchTail reports whether the rule matches a target whose literal prefix
// has already been matched; tail is what follows it.
func (r *rule) matchTail(tail string) bool {
	rest := r.pattern[r.plen:]
	switch rest {
	case "":
		return true
	case "$":
		return tail == ""
	}
	return match(rest, tail)
}
