package policy

import (
	"encoding/binary"
	"unsafe"
)

// An agentSlot is an entry of Robots.agents: a product token's tokenKey
// and the group that names it.
type agentSlot struct {
	head, tail uint64
	n          int32
	group      int32 // 1 + an index in Robots.groups, or 0 for an empty slot
}

// A tokenKey is a product token with ASCII letters folded to lower case:
// its length, and its first and last eight octets (four, for a token of
// four to seven octets; all of it, for a shorter one). It holds the whole
// token when that has sixteen octets or fewer, so that the agent table
// compares most tokens in three words, without reading the group.
type tokenKey struct {
	head, tail uint64
	n          int
}

// keyOfToken returns the tokenKey of s.
func keyOfToken(s string) tokenKey {
	n := len(s)
	p := unsafe.Slice(unsafe.StringData(s), n)
	k := tokenKey{n: n}
	switch {
	case n >= 8:
		k.head, k.tail = binary.LittleEndian.Uint64(p), binary.LittleEndian.Uint64(p[n-8:])
	case n >= 4:
		k.head, k.tail = uint64(binary.LittleEndian.Uint32(p)), uint64(binary.LittleEndian.Uint32(p[n-4:]))
	default:
		for _, c := range p {
			k.head = k.head<<8 | uint64(c)
		}
	}
	k.head, k.tail = lower8(k.head), lower8(k.tail)
	return k
}

// lower8 folds the ASCII capitals among the eight octets of w to lower case,
// all at once: an octet gets 0x20 when it lies in 'A'..'Z'.
func lower8(w uint64) uint64 {
	const ones = 0x0101010101010101
	low7 := w &^ (0x80 * ones) // sums below cannot carry into the next octet
	geA := low7 + (0x80-'A')*ones
	gtZ := low7 + (0x80-'Z'-1)*ones
	upper := geA &^ gtZ &^ w & (0x80 * ones) // ASCII octets only
	return w | upper>>2
}

// hash spreads k over the agent table.
func (k tokenKey) hash() uint32 {
	h := (k.head^uint64(k.n))*0x9E3779B97F4A7C15 ^ k.tail*0xC2B2AE3D27D4EB4F
	return uint32(h>>32 ^ h)
}

// group returns the group that applies to agent: the merged group naming
// its product token, else the merged '*' group, else nil.
//
// RFC 9309 §2.2.1: product tokens compare without regard to ASCII case, and
// a group naming the agent hides the '*' group even when it has no rules,
// or no rule that matches.
func (r *Robots) group(agent string) *group {
	if r == nil {
		return nil
	}
	if len(r.agents) > 0 {
		k := keyOfToken(agent)
		mask := uint32(len(r.agents) - 1)
		for h := k.hash() & mask; r.agents[h].group != 0; h = (h + 1) & mask {
			if s := &r.agents[h]; s.head == k.head && s.tail == k.tail && int(s.n) == k.n {
				if g := r.groups[s.group-1]; k.n <= 16 || equalFoldASCII(g.agent, agent) {
					return g
				}
			}
		}
	}
	return r.star
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

// addAgent enters g, a group naming a product token, in r.agents.
func (r *Robots) addAgent(g *group) {
	n := len(r.groups) // groups naming tokens, g included
	if r.global > 0 {
		n--
	}
	if 2*n > len(r.agents) {
		old := r.agents
		size := 8
		for size < 4*n {
			size *= 2
		}
		r.agents = make([]agentSlot, size)
		for _, s := range old {
			if s.group != 0 {
				r.insertAgent(s.group)
			}
		}
	}
	r.insertAgent(g.id + 1)
}

func (r *Robots) insertAgent(i int32) {
	k := keyOfToken(r.groups[i-1].agent)
	mask := uint32(len(r.agents) - 1)
	h := k.hash() & mask
	for r.agents[h].group != 0 {
		h = (h + 1) & mask
	}
	r.agents[h] = agentSlot{head: k.head, tail: k.tail, n: int32(k.n), group: i}
}
