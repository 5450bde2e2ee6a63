package policy

import (
	"encoding/binary"
	"math/bits"
)

// SWAR ("SIMD within a register") constants: a bit or value in every byte
// of a 64-bit word.
const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
	low7Bits = 0x7F7F7F7F7F7F7F7F
)

// indexColon returns the index of the first ':' in b[start:end] relative
// to start, or -1. It reads eight bytes at a time without a call: a key is
// short, so the colon is most often in the first word or two.
func indexColon(b []byte, start, end int) int {
	for i := start; i < end; i += 8 {
		if m := equalBytes(loadWord(b, i), ':'); m != 0 {
			if j := i + bits.TrailingZeros64(m)>>3; j < end {
				return j - start
			}
			return -1
		}
	}
	return -1
}

// equalBytes returns the word with the high bit of each byte of w that
// equals c set, and every other bit clear. c must be below 0x80.
//
// For a byte b, (b&0x7F ^ c) + 0x7F has its high bit clear exactly when
// b&0x7F == c, and b's own high bit rules out the bytes from 0x80 on. The
// sum is at most 0xFE, so no byte carries into the next and every byte is
// reported exactly (the classic has-zero-byte test is exact only in its
// lowest hit).
func equalBytes(w uint64, c byte) uint64 {
	t := (w & low7Bits) ^ (lowBits * uint64(c))
	return ^((t + low7Bits) | w) & highBits
}

// loadWord returns the eight bytes of b from i on as a little-endian word,
// so byte i is the word's lowest; past the end of b it reads zero bytes.
func loadWord(b []byte, i int) uint64 {
	if i+8 <= len(b) {
		return binary.LittleEndian.Uint64(b[i:])
	}
	var tail [8]byte
	copy(tail[:], b[i:])
	return binary.LittleEndian.Uint64(tail[:])
}
