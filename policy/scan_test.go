package policy

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// TestEqualBytes checks every byte value against every c the tokenizer
// looks for, in every position of a word, next to every kind of neighbour.
func TestEqualBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(9309, 8))
	for _, c := range []byte{':', '#', '\n', '\r', 0, 0x7F} {
		for b := 0; b < 256; b++ {
			for pos := 0; pos < 8; pos++ {
				var word [8]byte
				for i := range word {
					word[i] = byte(rng.Uint32())
				}
				if rng.IntN(2) == 0 {
					for i := range word { // neighbours equal to c or one off
						word[i] = c + byte(rng.IntN(3)) - 1
					}
				}
				word[pos] = byte(b)
				var want uint64
				for i, x := range word {
					if x == c {
						want |= 0x80 << (8 * i)
					}
				}
				w := binary.LittleEndian.Uint64(word[:])
				if got := equalBytes(w, c); got != want {
					t.Fatalf("equalBytes(%#016x, %q) = %#016x, want %#016x", w, c, got, want)
				}
			}
		}
	}
}

// TestIndexColon compares indexColon with bytes.IndexByte on every range
// of slices that have colons, or not, near word boundaries and the end.
func TestIndexColon(t *testing.T) {
	for _, s := range []string{
		"", ":", "a", "abcdefgh:", "abcdefg:", "abcdefghi:", "::::::::::::::::::",
		"Disallow: /a:b", "user-agent:x", "no colon here at all, none", "a:b",
		"\x80\xBA:\xFA:", "\xBA\xBA\xBA\xBA\xBA\xBA\xBA\xBA\xBA",
	} {
		b := []byte(s)
		for start := 0; start <= len(b); start++ {
			for end := start; end <= len(b); end++ {
				want := bytes.IndexByte(b[start:end], ':')
				if got := indexColon(b, start, end); got != want {
					t.Errorf("indexColon(%q, %d, %d) = %d, want %d", s, start, end, got, want)
				}
			}
		}
	}
}
