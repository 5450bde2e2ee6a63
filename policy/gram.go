package policy

import (
	"encoding/binary"
	"strings"
	"unsafe"
)

// A gramSet is a 64-bit summary of the bigrams (pairs of adjacent octets)
// of a string: bit gramHash(a, b) is set for every pair a, b in it. A
// wildcard rule can only match a target that holds every bigram of its
// literal segments, so one AND of two summaries rules most wildcard rules
// out before the matcher runs. The test has false positives (bigrams share
// bits) but never false negatives.
type gramSet uint64

// gramHash spreads a bigram over the 64 bits of a gramSet. It mixes the
// octets with shifts and XOR only, so that gramsOf can hash eight bigrams
// in one 64-bit word.
func gramHash(a, b byte) uint {
	return uint(a^b<<2^b>>4) & 63
}

// gramBits[i] is the gramSet of bit i alone. Reading it, rather than
// setting bits one by one, lets the bits of a word be set side by side.
var gramBits = func() (b [64]gramSet) {
	for i := range b {
		b[i] = 1 << i
	}
	return b
}()

// gramsOf returns the summary of the bigrams of s.
func gramsOf(s string) gramSet {
	n := len(s)
	if n < 9 {
		var g gramSet
		for i := 1; i < n; i++ {
			g |= 1 << gramHash(s[i-1], s[i])
		}
		return g
	}
	// Eight bigrams a word: the octets at i to i+7 and i+1 to i+8. The first
	// and last words overlap the others, which only sets bits twice.
	p := unsafe.Slice(unsafe.StringData(s), n)
	le := binary.LittleEndian
	g := grams8(hash8(le.Uint64(p), le.Uint64(p[1:]))) | grams8(hash8(le.Uint64(p[n-9:]), le.Uint64(p[n-8:])))
	for i := 8; i < n-9; i += 8 {
		g |= grams8(hash8(le.Uint64(p[i:]), le.Uint64(p[i+1:])))
	}
	return g
}

// hash8 returns the gramHash of eight bigrams, in its eight octets: of the
// octets of w, least significant first, each followed by the same octet
// of v.
func hash8(w, v uint64) uint64 {
	return w ^ v<<2&0xFCFCFCFCFCFCFCFC ^ v>>4&0x0F0F0F0F0F0F0F0F
}

// grams8 returns the summary of the eight bigrams whose gramHash are the
// octets of x.
func grams8(x uint64) gramSet {
	b := &gramBits
	return (b[x&63] | b[x>>8&63]) | (b[x>>16&63] | b[x>>24&63]) |
		(b[x>>32&63] | b[x>>40&63]) | (b[x>>48&63] | b[x>>56&63])
}

// needOf returns what a rule whose pattern, after its literal prefix, is
// rest requires of a target: the bigrams of its literal segments. rest is
// empty, "$", or starts with '*'. Zero, for a rule without a segment of
// two octets (a rule without wildcard part included), requires nothing.
func needOf(rest string) gramSet {
	rest = strings.TrimSuffix(rest, "$") // a final '$' anchors; it is no octet
	var g gramSet
	for seg := range strings.SplitSeq(rest, "*") {
		g |= gramsOf(seg)
	}
	return g
}

// admits reports whether a target whose bigrams g summarises may match a
// rule that needs n.
func (g gramSet) admits(n gramSet) bool { return n&^g == 0 }
