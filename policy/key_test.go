package policy

import (
	"encoding/binary"
	"strings"
	"testing"
)

// TestKeyWords checks the little-endian words and fold masks recognise
// compares keys with against the spellings they stand for.
func TestKeyWords(t *testing.T) {
	fold := func(s string) (word, mask uint64) {
		var b, m [8]byte
		copy(b[:], s)
		for i := 0; i < len(s); i++ {
			if 'a' <= s[i] && s[i] <= 'z' {
				m[i] = 0x20
			}
		}
		return binary.LittleEndian.Uint64(b[:]), binary.LittleEndian.Uint64(m[:])
	}
	for _, c := range []struct {
		name       string
		word, mask uint64
		spelling   string
	}{
		{"wordUserAge", wordUserAge, foldUserAge, "user-age"},
		{"wordErAgent", wordErAgent, foldErAgent, "er-agent"},
		{"wordDisallow", wordDisallow, fold8, "disallow"},
		{"wordAllo", wordAllo, fold4, "allo"},
		{"wordSite", wordSite, fold4, "site"},
		{"wordEmap", wordEmap, fold4, "emap"},
	} {
		if w, m := fold(c.spelling); w != c.word || m != c.mask {
			t.Errorf("%s = %#x with fold %#x, want %#x and %#x for %q", c.name, c.word, c.mask, w, m, c.spelling)
		}
	}
}

// TestRecogniseFastPath holds recognise to the plain prefix-by-prefix
// reference on every accepted spelling in several cases, with and without
// a suffix, cut short, and with one byte changed to a near miss.
func TestRecogniseFastPath(t *testing.T) {
	spellings := []string{
		"user-agent", "useragent", "user agent", "allow", "disallow", "dissallow",
		"dissalow", "disalow", "diasllow", "disallaw", "sitemap", "site-map",
		"crawl-delay", "clean-param", "host",
	}
	// Bytes a fold could confuse with a letter or '-', and plain ones.
	near := []byte{'@', '`', '[', '{', '\r', 0x0D, 0x05, 0x00, '_', ' ', '-', 'x', 'X', 0xC4, 0xE4}
	var keys []string
	for _, s := range spellings {
		for _, v := range []string{s, strings.ToUpper(s), strings.ToUpper(s[:1]) + s[1:], strings.ToUpper(s[:3]) + s[3:]} {
			keys = append(keys, v, v+"s", v+"ed", v+"\x00")
			for n := 1; n < len(v); n++ {
				keys = append(keys, v[:n])
			}
			for i := range len(v) {
				for _, c := range near {
					b := []byte(v)
					b[i] = c
					keys = append(keys, string(b))
					b[i] ^= 0x20
					keys = append(keys, string(b))
				}
			}
		}
	}
	for _, k := range keys {
		// A key as tokenize hands it over: a slice of a longer body.
		body := []byte(k + ": /x\n")
		key := body[:len(k)]
		kind, typo := recognise(key)
		wantKind, wantTypo := refRecognise(key)
		if kind != wantKind || typo != wantTypo {
			t.Errorf("recognise(%q) = %v, %v, want %v, %v", k, kind, typo, wantKind, wantTypo)
		}
	}
}
