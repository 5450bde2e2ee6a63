package policy

import (
	"encoding/binary"
	"testing"
)

// TestLower8 checks the word-at-a-time case fold against lower, octet by
// octet, for every octet in every position.
func TestLower8(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 8; pos++ {
			var b [8]byte
			for i := range b {
				b[i] = byte(c + 37*i) // neighbours of every kind
			}
			b[pos] = byte(c)
			got := make([]byte, 8)
			binary.LittleEndian.PutUint64(got, lower8(binary.LittleEndian.Uint64(b[:])))
			for i := range b {
				if want := lower(b[i]); got[i] != want {
					t.Fatalf("lower8(% x) octet %d = %#x, want %#x", b, i, got[i], want)
				}
			}
		}
	}
}
