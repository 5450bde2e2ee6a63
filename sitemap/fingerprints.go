package sitemap

import (
	"hash/maphash"
	"math/bits"
)

// The Walker's duplicate check keeps one 64-bit fingerprint per page URL it
// passed on (maphash with a seed of the walk's own), in open-addressing
// tables that are at least 53% full: at most 15 bytes per URL, whatever the
// URLs' length (a map[string] held about 75 bytes per URL). The top bits of
// a fingerprint pick one of 64 tables, which grow one at a time, so that a
// growth holds an old and a new copy of 1/64 of the set, not of all of it.
// Two different URLs share a fingerprint with a probability of about
// n²/2⁶⁵ for n URLs: 4·10⁻⁷ for 4 million; the second is then dropped as a
// duplicate.

const (
	// fpShardBits is log2 of the number of tables.
	fpShardBits = 6
	// fpMinCap is a table's first size.
	fpMinCap = 64
	// fpMaxLoad is the fill, in 1/1024, at which the table grows by half:
	// at 80% a failed look-up probes about 13 slots, and after growing the
	// table is 53% full, 15 bytes a fingerprint.
	fpMaxLoad = 819
)

// A fingerprints is a set of strings kept as 64-bit hashes. The zero value
// is empty and ready; it is not safe for concurrent use.
type fingerprints struct {
	seed   maphash.Seed
	shards [1 << fpShardBits]fpTable
	n      int
}

// An fpTable is one open-addressing table of fingerprints.
type fpTable struct {
	slots []uint64 // 0 is a free slot; a hash of 0 is stored as 1
	n     int
}

func newFingerprints() *fingerprints {
	return &fingerprints{seed: maphash.MakeSeed()}
}

// add adds s to the set and reports whether it was not there yet.
func (f *fingerprints) add(s string) bool {
	h := maphash.String(f.seed, s)
	if h == 0 {
		h = 1
	}
	t := &f.shards[h>>(64-fpShardBits)]
	if (t.n+1)*1024 > len(t.slots)*fpMaxLoad {
		t.grow()
	}
	if !insert(t.slots, h) {
		return false
	}
	t.n++
	f.n++
	return true
}

// len returns the number of fingerprints in the set.
func (f *fingerprints) len() int { return f.n }

// bytes returns the memory the tables hold.
func (f *fingerprints) bytes() int {
	n := 0
	for i := range f.shards {
		n += 8 * len(f.shards[i].slots)
	}
	return n
}

func (t *fpTable) grow() {
	size := max(fpMinCap, len(t.slots)+len(t.slots)/2)
	slots := make([]uint64, size)
	for _, h := range t.slots {
		if h != 0 {
			insert(slots, h)
		}
	}
	t.slots = slots
}

// insert puts h into slots by linear probing from the slot the bits of h
// below the table's pick, and reports false if h is there already. slots
// has a free slot.
func insert(slots []uint64, h uint64) bool {
	i, _ := bits.Mul64(h<<fpShardBits, uint64(len(slots)))
	for {
		switch slots[i] {
		case 0:
			slots[i] = h
			return true
		case h:
			return false
		}
		i++
		if i == uint64(len(slots)) {
			i = 0
		}
	}
}
