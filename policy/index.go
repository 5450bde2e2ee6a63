package policy

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strings"
	"unsafe"
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
	keys  []uint64
	nodes []node // nodes[i] describes prefixes[i]; one more marks the end
	rules []rule
	// ranks[j] holds what the scan of rules[j] reads before it matches,
	// kept apart so that rules skipped touch little memory.
	ranks []rank
}

// A rank is the part of a rule that decides whether to try it.
type rank struct {
	need  gramSet
	prio  int32
	allow bool
}

// A node is what lookup needs of one prefix besides its key, packed so
// that a prefix's links and its rules' bounds share a cache line.
type node struct {
	parent int32 // longest other prefix that this one starts with, or -1
	// start is the first of the prefix's rules; the next node's start ends
	// them. They are in decision order: priority descending, allow before
	// disallow, then file order.
	start int32
	plen  int32 // length of the prefix
}

// key8 packs the first eight octets of s, big-endian, zero-padded. Since a
// normalised string never holds a NUL octet, key8(a) < key8(b) implies
// a < b, and a > b likewise.
func key8(s string) uint64 {
	if len(s) >= 8 {
		return binary.BigEndian.Uint64(unsafe.Slice(unsafe.StringData(s), 8))
	}
	var b [8]byte
	copy(b[:], s)
	return binary.BigEndian.Uint64(b[:])
}

// A rule is one compiled Allow or Disallow pattern.
type rule struct {
	pattern string // normalised for matching (see compilePattern)
	raw     string // as written in the file
	prio    int32  // priority: the longer, the more specific
	plen    int32  // length of the literal prefix of pattern
	line    int32
	allow   bool
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
	n := len(rules) + 1 // an upper bound on the prefixes, plus the end node
	x := index{
		rules:    rules,
		prefixes: make([]string, 0, n),
		keys:     make([]uint64, 0, n),
		nodes:    make([]node, 0, n),
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
		x.nodes = append(x.nodes, node{parent: parent, start: int32(i), plen: int32(len(p))})
	}
	x.nodes = append(x.nodes, node{parent: -1, start: int32(len(rules))})
	x.ranks = make([]rank, len(rules))
	for j := range rules {
		r := &rules[j]
		x.ranks[j] = rank{needOf(r.pattern[r.plen:]), r.prio, r.allow}
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
	lo := upperBound(x.keys, tk)
	if lo > 0 && x.keys[lo-1] == tk && len(target) > 8 {
		// prefixes[first:last] share target's key: strings decide. (When
		// the key holds all of target, the last of them starts with target,
		// so every prefix of target is on its chain.)
		first, last := lo-1, lo
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
	if i >= 0 && !x.starts(target, tk, i) {
		// Climb to the prefixes of prefixes[i] that also start target.
		p := x.prefixes[i]
		n := 0
		for n < len(p) && n < len(target) && p[n] == target[n] {
			n++
		}
		for i >= 0 && int(x.nodes[i].plen) > n {
			i = x.nodes[i].parent
		}
	}
	var best *rule
	var have gramSet // the bigrams of target, once a wildcard rule needs them
	haveDone := false
	for ; i >= 0; i = x.nodes[i].parent {
		nd := &x.nodes[i]
		tail := target[nd.plen:]
		for j, end := nd.start, x.nodes[i+1].start; j < end; j++ {
			rk := &x.ranks[j]
			if best != nil && (rk.prio < best.prio || rk.prio == best.prio && (best.allow || !rk.allow)) {
				break // neither this rule nor any later one of the prefix can win
			}
			if rk.need != 0 {
				if !haveDone {
					have, haveDone = gramsOf(target), true
				}
				if !have.admits(rk.need) {
					continue
				}
			}
			if r := &x.rules[j]; r.matchTail(tail) {
				best = r
				break
			}
		}
	}
	return best
}

// starts reports whether prefixes[i], whose key is x.keys[i], starts the
// target whose key is tk. A prefix of at most eight octets is decided by
// the keys alone: its key is the prefix padded with NULs, which no
// normalised target holds.
func (x *index) starts(target string, tk uint64, i int32) bool {
	plen := x.nodes[i].plen
	if plen <= 8 {
		return (tk^x.keys[i])&keyMask(plen) == 0
	}
	return tk == x.keys[i] && strings.HasPrefix(target, x.prefixes[i])
}

// keyMask selects the first n (at most 8) octets of a key; a shift by 64,
// for n == 0, selects none.
func keyMask(n int32) uint64 {
	return ^uint64(0) << (64 - 8*uint(n))
}

// upperBound returns the number of keys not above k, which are sorted.
func upperBound(keys []uint64, k uint64) int {
	n := len(keys)
	if n == 0 {
		return 0
	}
	base := 0
	for n > 1 {
		half := n >> 1
		if keys[base+half] <= k {
			base += half
		}
		n -= half
	}
	if keys[base] <= k {
		base++
	}
	return base
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
