package policy

import "strings"

// An octetSet is a 63-bit summary of the octets a string holds: bit
// octetBit(c) is set for every octet c in it. A wildcard rule can only
// match a target that holds every octet of its literal segments, so one
// AND of two summaries rules most wildcard rules out before the matcher
// runs. The test has false positives (letters of both cases share a bit,
// as do octets no normalised string holds) but never false negatives.
//
// A target's summary costs nothing extra: it is read from the same table
// lookups that decide whether the target needs normalising (see
// octetTable).
type octetSet uint64

// octetBit returns the bit of octet c in an octetSet: one for each letter
// without regard to case, one for each digit, one for each other octet a
// normalised target or pattern segment may hold, and a last one for every
// octet none may hold. It is never 63, which octetTable keeps for itself.
func octetBit(c byte) uint {
	const others = "!#%&'()+,-./:;=?@[]_~" // what normalising leaves as it is
	switch {
	case 'a' <= c|0x20 && c|0x20 <= 'z':
		return uint(c|0x20) - 'a'
	case '0' <= c && c <= '9':
		return 26 + uint(c) - '0'
	}
	if i := strings.IndexByte(others, c); i >= 0 {
		return 36 + uint(i)
	}
	return 62
}

// The octetSets of '/' and '?' alone, which targets are built with.
var (
	slashOctet = octetSet(1) << octetBit('/')
	queryOctet = octetSet(1) << octetBit('?')
)

// octetsOf returns the summary of the octets of s.
func octetsOf(s string) octetSet {
	return octetSet(summarize(s, &targetOctets) &^ notPlain)
}

// needOf returns what a rule whose pattern, after its literal prefix, is
// rest requires of a target: the octets of its literal segments. rest is
// empty, "$", or starts with '*'. Zero, for a rule without a segment (a
// rule without wildcard part included), requires nothing.
func needOf(rest string) octetSet {
	rest = strings.TrimSuffix(rest, "$") // a final '$' anchors; it is no octet
	return octetsOf(strings.ReplaceAll(rest, "*", ""))
}

// admits reports whether a target whose octets s summarises may match a
// rule that needs n.
func (s octetSet) admits(n octetSet) bool { return n&^s == 0 }
