package policy

import "strings"

// A gramSet is a 64-bit summary of the bigrams (pairs of adjacent octets)
// of a string: bit gramHash(a, b) is set for every pair a, b in it. A
// wildcard rule can only match a target that holds every bigram of its
// literal segments, so one AND of two summaries rules most wildcard rules
// out before the matcher runs. The test has false positives (bigrams share
// bits) but never false negatives.
type gramSet uint64

// gramHash spreads a bigram over the 64 bits of a gramSet.
func gramHash(a, b byte) uint {
	return uint((uint32(a)<<8 | uint32(b)) * 0x9E3779B1 >> 26)
}

// gramsOf returns the summary of the bigrams of s.
func gramsOf(s string) gramSet {
	var g gramSet
	for i := 1; i < len(s); i++ {
		g |= 1 << gramHash(s[i-1], s[i])
	}
	return g
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
