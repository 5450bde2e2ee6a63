package policy

import (
	"cmp"
	"encoding/binary"
	"math/bits"
	"slices"
	"strings"
	"unsafe"
)

// An index is a group's rules compiled for lookup.
//
// Every pattern is split into its literal prefix (up to the first '*', or
// without a final '$') and the rest. The distinct prefixes are kept sorted,
// each with a link to the longest other prefix it starts with. The
// prefixes that start a target are then found by one search (the
// greatest prefix not above the target) and a walk up those links: every
// prefix of the target is on that chain, because everything sorted between
// a prefix of t and t itself starts with that prefix. Only the rules of the
// prefixes on the chain are tried, highest priority first, and a rule with
// a wildcard part only when the target holds every octet of its literal
// segments (see octetSet).
//
// The search starts from the target's second octet: the prefixes that
// start with '/' and that octet form a run of the sorted prefixes, most
// often eight or fewer, which one block of key compares settles; longer
// runs take a second step, and only the longest use the whole search tree.
//
// What a lookup reads is kept small, close together and cheap to branch
// on, since a crawler checks many files in turn, each check finding both
// the caches and the branch predictor cold: keys, nodes and ranks are
// fixed-size and pointer-free, the octets compared past the keys sit in one
// string, pool, in the order lookups visit them, and the key search
// computes rather than guesses its way down.
//
// The fields are in the order a look-up reads them (find, then scan).
type index struct {
	// second has bit c set when a prefix of two octets or more starts
	// with '/' and c; short is the prefix "/", else "", else -1. A target
	// (which starts with '/') whose second octet is not in second starts
	// no other prefix.
	second [4]uint64
	short  int32
	// runs[k] is the first of the prefixes that start with '/' and the
	// k-th octet of second, in order; they end where the next run starts,
	// and a last entry ends the last run. secondBase[w] counts the octets
	// of second[:w], so that a target's run is found by counting bits.
	secondBase [4]uint8
	runs       []int32
	// keys[i] is keyOf the i-th prefix, for i < len(nodes)-1; a search
	// tree over them follows (see upperBound).
	keys   []key16
	levels []int32 // offsets in keys of the search tree's levels, top first
	nodes  []node  // nodes[i] describes the i-th prefix; one more marks the end
	ranks  []rank  // what lookup reads of rules[j]
	// pool holds each prefix's octets past its sixteenth, followed by the
	// wildcard parts of its rules, each led by its length in two octets
	// (see wildLenFits).
	pool string
	// rules are the compiled rules in decision order within each prefix;
	// lookup's answer indexes them, and Explain reads them.
	rules []rule
}

// This fails to compile unless a normalised pattern, at most three octets
// for each octet of a line, fits the pool's two-octet lengths.
const _ uint16 = 3 * maxLineLen

// A rank is what lookup reads of a rule.
type rank struct {
	need octetSet // the octets a target must hold to match rest
	// ord is prio<<1 | allow: of two matching rules, the one of greater
	// ord wins (RFC 9309 §2.2.2: the longest match, allow on a tie).
	ord uint32
	// rest is what the rule requires past its literal prefix: restNone,
	// restEnd, or the pool offset of its wildcard part.
	rest uint32
}

// Values of rank.rest below any pool offset (the pool starts with two
// unused octets).
const (
	restNone = 0 // nothing: the prefix alone matches
	restEnd  = 1 // "$": the target ends with the prefix

	// Flags of a pool offset in rank.rest, for a wildcard part that is '*'
	// and one literal segment, which the rest of the target then contains
	// (restContains) or, for a pattern ending in '$', ends with (restSuffix).
	restContains = 1 << 31
	restSuffix   = 1 << 30
	restOffset   = restSuffix - 1 // the bits of the offset
)

// A node describes one prefix.
type node struct {
	parent int32 // longest other prefix that this one starts with, or -1
	// start is the first of the prefix's rules; the next node's start ends
	// them. They are in decision order: priority descending, allow before
	// disallow, then file order.
	start int32
	plen  int32 // length of the prefix
	tail  int32 // pool offset of the prefix's octets past its sixteenth
	// up is the greatest ord of the rules of the prefixes this one starts
	// with (0 for none): once a rule of ord up or more matches, no rule
	// further up the chain can win.
	up uint32
}

// A key16 holds the first sixteen octets of a string, big-endian and
// zero-padded. Since a normalised string never holds a NUL octet, keys
// compare as the strings' first sixteen octets do, and a key holds the whole
// of a string of up to sixteen octets.
type key16 struct{ hi, lo uint64 }

// keyOf returns the key16 of s.
func keyOf(s string) key16 {
	if len(s) >= 8 {
		p := unsafe.Slice(unsafe.StringData(s), len(s))
		k := key16{hi: binary.BigEndian.Uint64(p)}
		if len(s) >= 16 {
			k.lo = binary.BigEndian.Uint64(p[8:])
		} else {
			// The last eight octets, shifted over those of hi (by 64, for
			// eight octets, to nothing).
			k.lo = binary.BigEndian.Uint64(p[len(s)-8:]) << (8 * (16 - uint(len(s))))
		}
		return k
	}
	var b [8]byte
	copy(b[:], s)
	return key16{hi: binary.BigEndian.Uint64(b[:])}
}

// le returns 1 if key k is not above key t, else 0, without branching:
// the borrow out of the 128-bit subtraction t - k.
func (k key16) le(t key16) int {
	_, borrow := bits.Sub64(t.lo, k.lo, 0)
	_, borrow = bits.Sub64(t.hi, k.hi, borrow)
	return int(1 - borrow)
}

// b2i returns 1 for true and 0 for false, without branching.
func b2i(b bool) int {
	i := 0
	if b {
		i = 1
	}
	return i
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
		items[i] = item{keyOf(rules[i].pattern[:rules[i].plen]).hi, int32(i)}
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
	poolLen := 2
	for j, it := range items {
		r := &rules[it.i]
		sorted[j] = *r
		poolLen += max(int(r.plen)-16, 0) + len(r.pattern) - int(r.plen) + 2
	}
	rules = sorted
	n := len(rules) + 1 // an upper bound on the prefixes, plus the end node
	x := index{
		rules: rules,
		keys:  make([]key16, 0, n),
		nodes: make([]node, 0, n),
		ranks: make([]rank, len(rules)),
		short: -1,
	}
	pool := make([]byte, 2, poolLen)
	var stack []int32 // prefixes that start the current one, shortest first
	var runsEnd int32 // one past the last prefix that starts with '/' and another octet
	prev := ""
	for j := range rules {
		r := &rules[j]
		p := r.pattern[:r.plen]
		if len(x.nodes) == 0 || prev != p {
			for len(stack) > 0 && !strings.HasPrefix(p, x.prefix(stack[len(stack)-1])) {
				stack = stack[:len(stack)-1]
			}
			parent := int32(-1)
			if len(stack) > 0 {
				parent = stack[len(stack)-1]
			}
			stack = append(stack, int32(len(x.nodes)))
			x.keys = append(x.keys, keyOf(p))
			var up uint32
			if parent >= 0 {
				up = max(x.ranks[x.nodes[parent].start].ord, x.nodes[parent].up)
			}
			x.nodes = append(x.nodes, node{parent: parent, start: int32(j), plen: int32(len(p)), tail: int32(len(pool)), up: up})
			if len(p) > 16 {
				pool = append(pool, p[16:]...)
			}
			switch i := int32(len(x.nodes) - 1); {
			case len(p) >= 2 && p[0] == '/':
				if w, b := &x.second[p[1]>>6], uint64(1)<<(p[1]&63); *w&b == 0 {
					*w |= b
					x.runs = append(x.runs, i)
				}
				runsEnd = i + 1
			case p == "/" || p == "" && x.short < 0:
				x.short = i
			}
			prev = p
		}
		rk := rank{ord: uint32(r.prio)<<1 | uint32(b2i(r.allow))}
		switch rest := simplifyRest(r.pattern[r.plen:]); rest {
		case "":
			rk.rest = restNone
		case "$":
			rk.rest = restEnd
		default:
			rk.need = needOf(rest)
			rk.rest = uint32(len(pool))
			if rest[0] == '*' && strings.IndexByte(rest[1:], '*') < 0 {
				if rest[len(rest)-1] == '$' {
					rk.rest |= restSuffix
				} else {
					rk.rest |= restContains
				}
			}
			pool = append(pool, byte(len(rest)), byte(len(rest)>>8))
			pool = append(pool, rest...)
		}
		x.ranks[j] = rk
	}
	x.nodes = append(x.nodes, node{parent: -1, start: int32(len(rules)), tail: int32(len(pool))})
	x.runs = append(x.runs, runsEnd)
	for w := 1; w < len(x.secondBase); w++ {
		x.secondBase[w] = x.secondBase[w-1] + uint8(bits.OnesCount64(x.second[w-1]))
	}
	x.pool = string(pool)
	x.keys, x.levels = searchTree(x.keys)
	return x
}

// simplifyRest returns what a pattern requires past its literal prefix,
// rest, in its simplest form: runs of '*' as one, and a final '*' (before a
// '$' too) dropped, as it matches whatever follows. So "*" and "*$" require
// nothing, and "*?*" is "*?". A rule's priority still counts the octets
// as written (Google-specific).
func simplifyRest(rest string) string {
	end := strings.HasSuffix(rest, "$")
	core := strings.TrimSuffix(rest, "$")
	if strings.Contains(core, "**") {
		b := make([]byte, 0, len(core))
		for i := 0; i < len(core); i++ {
			if core[i] != '*' || len(b) == 0 || b[len(b)-1] != '*' {
				b = append(b, core[i])
			}
		}
		core = string(b)
	}
	if strings.HasSuffix(core, "*") {
		return strings.TrimSuffix(core, "*")
	}
	if end {
		return core + "$"
	}
	return core
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

// lookup returns the index in rules of the rule that decides target, whose
// octets set summarises, or -1 when none matches.
func (x *index) lookup(target string, set octetSet) int32 {
	return x.scan(x.find(target), target, set)
}

// find returns the longest prefix that starts target, or -1 for none.
func (x *index) find(target string) int32 {
	if len(target) < 2 {
		return x.short // targets start with '/'
	}
	w, b := x.second[target[1]>>6], uint64(1)<<(target[1]&63)
	if w&b == 0 {
		return x.short
	}
	// The greatest prefix that is not above target: found by key, and by
	// the octets past the key only among the prefixes that share target's
	// key. The key search is confined to the run of prefixes that start
	// as target does, which is most often a block of the search tree's
	// size or less.
	tk := keyOf(target)
	var lo int
	run := int(x.secondBase[target[1]>>6]) + bits.OnesCount64(w&(b-1))
	start, end := int(x.runs[run]), int(x.runs[run+1])
	switch n := x.bottom(); {
	case end-start <= 8:
		lo = x.countBlock(min(start, n-8), tk)
	case end-start <= 64 && n >= 64:
		// Eight blocks: every eighth key picks one.
		i := min(start, n-64)
		k := x.keys[i : i+64 : i+64]
		lo = x.countBlock(i+8*(k[8].le(tk)+k[16].le(tk)+k[24].le(tk)+k[32].le(tk)+
			k[40].le(tk)+k[48].le(tk)+k[56].le(tk)), tk)
	default:
		lo = x.upperBound(tk)
	}
	if lo == 0 {
		return -1
	}
	i := int32(lo - 1)
	if k := x.keys[i]; k.lo&0xFF == 0 {
		// Prefix i has fifteen octets or fewer, so it does not share the
		// key of a longer target, and its key alone tells whether it
		// starts target and how far they agree.
		dh, dl := tk.hi^k.hi, tk.lo^k.lo
		if dh&keyBits(k.hi)|dl&keyBits(k.lo) == 0 {
			return i
		}
		zh := bits.LeadingZeros64(dh) >> 3 // 8 when the first eight octets agree
		return x.climb(i, zh+zh>>3*(bits.LeadingZeros64(dl)>>3))
	}
	if x.keys[i] == tk && len(target) > 16 {
		// The prefixes first to last-1 share target's key, so all are at
		// least sixteen octets long, in target's run, and their tails
		// decide. (When the key holds all of target, the last of them
		// starts with target, so every prefix of target is on its chain.)
		first, last := lo-1, lo
		if first > start && x.keys[first-1] == tk { // more than one
			for a := start; a < first; {
				if m := int(uint(a+first) >> 1); x.keys[m] == tk {
					first = m
				} else {
					a = m + 1
				}
			}
		}
		rest := target[16:]
		for lo = first; lo < last; {
			if m := int(uint(lo+last) >> 1); x.tail(int32(m)) <= rest {
				lo = m + 1
			} else {
				last = m
			}
		}
		i = int32(lo - 1)
	}
	if i >= 0 && !x.starts(target, tk, i) {
		i = x.climb(i, x.common(target, tk, i))
	}
	return i
}

// climb returns the longest of prefix i and the prefixes that start it
// that has n octets or fewer, or -1 for none.
func (x *index) climb(i int32, n int) int32 {
	for i >= 0 && int(x.nodes[i].plen) > n {
		i = x.nodes[i].parent
	}
	return i
}

// keyBits selects the octets of a half of a key that precede its NULs: all
// of a prefix's octets there.
func keyBits(w uint64) uint64 {
	return ^uint64(0) << (bits.TrailingZeros64(w) &^ 7)
}

// scan returns the rule that decides target among the rules of prefix i,
// which starts target, and of the prefixes that start it; -1 for none.
// have summarises the octets of target.
func (x *index) scan(i int32, target string, have octetSet) int32 {
	best := int32(-1)
	var bestOrd uint32 // 0 below every rule's
	for i >= 0 {
		nd := &x.nodes[i]
		for j, end := nd.start, x.nodes[i+1].start; j < end; j++ {
			rk := &x.ranks[j]
			if rk.ord <= bestOrd {
				break // neither this rule nor any later one of the prefix can win
			}
			if !have.admits(rk.need) {
				continue
			}
			if rk.rest != restNone && !x.tries(rk, nd.plen, target) {
				continue
			}
			best, bestOrd = j, rk.ord
			break
		}
		if bestOrd >= nd.up {
			break // no rule further up can win
		}
		i = nd.parent
	}
	return best
}

// tries reports whether a rule with a wildcard part or '$', whose literal
// prefix of plen octets starts target, matches it.
func (x *index) tries(rk *rank, plen int32, target string) bool {
	if rk.rest == restEnd {
		return len(target) == int(plen)
	}
	w, tail := x.wild(rk.rest&restOffset), target[plen:]
	switch {
	case rk.rest&restContains != 0:
		return strings.Contains(tail, w[1:])
	case rk.rest&restSuffix != 0:
		return strings.HasSuffix(tail, w[1:len(w)-1])
	}
	return match(w, tail)
}

// allows reports whether rule j, a result of lookup, is an Allow rule.
func (x *index) allows(j int32) bool { return x.ranks[j].ord&1 != 0 }

// prefix returns prefix i.
func (x *index) prefix(i int32) string {
	return x.rules[x.nodes[i].start].pattern[:x.nodes[i].plen]
}

// tail returns the octets of prefix i past its sixteenth.
func (x *index) tail(i int32) string {
	return x.pool[x.nodes[i].tail : x.nodes[i].tail+max(x.nodes[i].plen-16, 0)]
}

// wild returns the wildcard part of a rule whose rank.rest is off.
func (x *index) wild(off uint32) string {
	n := uint32(x.pool[off]) | uint32(x.pool[off+1])<<8
	return x.pool[off+2 : off+2+n]
}

// starts reports whether prefix i starts the target whose key is tk. A
// prefix of fifteen octets or fewer is told by its key alone: the prefix
// padded with NULs, which no normalised target holds, so its octets are
// those before its trailing NULs. Not reading the prefix's node lets the
// search go on before the node arrives.
func (x *index) starts(target string, tk key16, i int32) bool {
	k := x.keys[i]
	if k.lo&0xFF == 0 {
		return (tk.hi^k.hi)&keyBits(k.hi)|(tk.lo^k.lo)&keyBits(k.lo) == 0
	}
	plen := x.nodes[i].plen
	return tk == k && len(target) >= int(plen) && target[16:plen] == x.tail(i)
}

// common returns the length of the longest common prefix of target, whose
// key is tk, and prefix i.
func (x *index) common(target string, tk key16, i int32) int {
	plen := int(x.nodes[i].plen)
	k := x.keys[i]
	if d := tk.hi ^ k.hi; d != 0 {
		return min(bits.LeadingZeros64(d)>>3, plen, len(target))
	}
	if d := tk.lo ^ k.lo; d != 0 {
		return min(8+bits.LeadingZeros64(d)>>3, plen, len(target))
	}
	// The keys agree: both hold at least sixteen octets, or are equal.
	if plen <= 16 || len(target) <= 16 {
		return min(plen, len(target))
	}
	t, p := target[16:], x.tail(i)
	n := 0
	for n < len(p) && n < len(t) && p[n] == t[n] {
		n++
	}
	return 16 + n
}

// upperBound returns the number of prefixes whose key is not above k.
//
// The keys are searched as a static B-tree of eight keys a node: the
// prefixes' keys in blocks of eight form the bottom level, each level
// above holds the first keys of the blocks of the level below but its
// first, and blocks are padded with keys above all others. Counting the
// keys of a block not above k gives the block to descend to. The counts
// do not branch on the keys: the eight comparisons of a level run side by
// side, and a crawler's targets would make any branch unpredictable.
func (x *index) upperBound(k key16) int {
	j := 0
	for _, off := range x.levels {
		j = x.countBlock(int(off)+8*j, k) - int(off)
	}
	return j
}

// bottom returns the length of the search tree's bottom level: the keys
// of the prefixes, padded to a multiple of eight.
func (x *index) bottom() int {
	return (len(x.nodes) - 1 + 7) &^ 7
}

// countBlock returns i plus the number of keys of keys[i:i+8] not above k:
// the number of prefixes whose key is not above k when that is all of
// keys[:i] and none past keys[i+8].
func (x *index) countBlock(i int, k key16) int {
	b := (*[8]key16)(x.keys[i:])
	return i + b[0].le(k) + b[1].le(k) + b[2].le(k) + b[3].le(k) +
		b[4].le(k) + b[5].le(k) + b[6].le(k) + b[7].le(k)
}

// searchTree returns the keys of sorted prefixes followed by the upper
// levels of their search tree, and the levels' offsets, top first.
func searchTree(sorted []key16) ([]key16, []int32) {
	if len(sorted) == 0 {
		return nil, nil
	}
	top := key16{^uint64(0), ^uint64(0)} // above every key: 0xFF is never a normalised octet
	blocks := func(n int) int { return (n + 7) / 8 }
	size := 0
	for n := len(sorted); ; n = blocks(n) - 1 {
		size += 8 * blocks(n)
		if n <= 8 {
			break
		}
	}
	keys := make([]key16, 0, size)
	var levels []int32
	level := sorted
	for {
		levels = append(levels, int32(len(keys)))
		keys = append(keys, level...)
		for len(keys)%8 != 0 {
			keys = append(keys, top)
		}
		if len(level) <= 8 {
			break
		}
		var next []key16 // the level above: first keys of blocks 1, 2, ...
		for b := 8; b < len(level); b += 8 {
			next = append(next, level[b])
		}
		level = next
	}
	slices.Reverse(levels)
	return keys, levels
}
