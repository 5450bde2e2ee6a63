package policy

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// refTokenize is the straightforward byte-at-a-time tokenizer the fast one in
// parse.go replaced. It is kept as the reference that FuzzTokenize and
// TestTokenizeReference hold tokenize to, call for call. Unlike tokenize,
// it takes the body before skipBOM.
func refTokenize(body []byte, h handler) {
	// Google-specific: robots.cc ParseRobotsTxt skips each byte that equals
	// the BOM's byte at bom_pos, and sets bom_pos past the BOM at the first
	// byte that does not.
	const bom = "\xEF\xBB\xBF"
	for pos := 0; pos < len(bom) && len(body) > 0; pos++ {
		if body[0] != bom[pos] {
			break
		}
		body = body[1:]
	}
	num := 0
	cr := bytes.IndexByte(body, '\r') >= 0
	for {
		i := bytes.IndexByte(body, '\n')
		line := body
		if i >= 0 {
			line = body[:i]
		}
		if cr {
			if j := bytes.IndexByte(line, '\r'); j >= 0 {
				// CR ends a line too; CRLF is one line break.
				i, line = j, body[:j]
				if j+1 < len(body) && body[j+1] == '\n' {
					i++
				}
			}
		}
		num++
		refParseLine(num, line, h)
		if i < 0 {
			return
		}
		body = body[i+1:]
	}
}

// refParseLine splits one line into key and value and reports it to h.
func refParseLine(num int, line []byte, h handler) {
	ln := lineInfo{num: num}
	if len(line) > maxLineLen {
		line = line[:maxLineLen]
		ln.tooLong = true
	}
	colon := -1
	for i, c := range line {
		if c == '#' || c == 0 {
			ln.hashGlued = c == '#' && i > 0 && !isSpace(line[i-1])
			line = line[:i]
			break
		}
		if c == ':' && colon < 0 {
			colon = i
		}
	}
	trimmed := trimSpace(line)
	if len(trimmed) == 0 {
		return
	}
	colon -= cap(line) - cap(trimmed)
	line = trimmed
	var key, value []byte
	if colon >= 0 {
		key, value = line[:colon], line[colon+1:]
	} else {
		i := bytes.IndexAny(line, " \t")
		if i < 0 {
			h.invalid(ln, line)
			return
		}
		key, value = line[:i], trimSpace(line[i:])
		if bytes.ContainsAny(value, " \t") {
			h.invalid(ln, line)
			return
		}
		ln.missingColon = true
	}
	key, value = trimSpace(key), trimSpace(value)
	if len(key) == 0 {
		h.invalid(ln, line)
		return
	}
	kind, typo := refRecognise(key)
	ln.typo = typo
	ln.key = key
	switch kind {
	case keyUserAgent:
		h.userAgent(ln, value)
	case keyAllow:
		h.rule(ln, true, value)
	case keyDisallow:
		h.rule(ln, false, value)
	case keySitemap:
		h.sitemap(ln, value)
	default:
		h.other(ln, key, value)
	}
}

// refRecognise is the plain prefix-by-prefix key recogniser: the fast
// path of recognise is what the reference leaves out.
func refRecognise(key []byte) (kind keyKind, typo bool) { return recogniseSpelled(key) }

// A callLog is a handler that writes down every call with everything the
// tokenizer passed: the kind, every lineInfo field, and each slice's bytes
// and offset in the body (cap(body)-cap(slice)), or "nil".
type callLog struct {
	base  int // cap of the body being tokenized
	calls []string
}

var _ handler = (*callLog)(nil)

func (c *callLog) span(b []byte) string {
	if b == nil {
		return "nil"
	}
	return fmt.Sprintf("%q@%d", b, c.base-cap(b))
}

func (c *callLog) add(ln lineInfo, kind string, slices ...[]byte) {
	s := fmt.Sprintf("%d %s typo=%v missingColon=%v tooLong=%v hashGlued=%v key=%s",
		ln.num, kind, ln.typo, ln.missingColon, ln.tooLong, ln.hashGlued, c.span(ln.key))
	for _, b := range slices {
		s += " " + c.span(b)
	}
	c.calls = append(c.calls, s)
}

func (c *callLog) userAgent(ln lineInfo, value []byte) { c.add(ln, "user-agent", value) }
func (c *callLog) rule(ln lineInfo, allow bool, value []byte) {
	c.add(ln, fmt.Sprintf("rule allow=%v", allow), value)
}
func (c *callLog) sitemap(ln lineInfo, value []byte)    { c.add(ln, "sitemap", value) }
func (c *callLog) other(ln lineInfo, key, value []byte) { c.add(ln, "other", key, value) }
func (c *callLog) invalid(ln lineInfo, text []byte)     { c.add(ln, "invalid", text) }

// checkTokenize fails t unless tokenize and refTokenize make the same calls
// for body. The body is copied into a buffer with spare capacity filled
// with special bytes, so that reading past len(body) would show.
func checkTokenize(t *testing.T, body []byte) {
	t.Helper()
	buf := make([]byte, len(body), len(body)+16)
	copy(buf, body)
	copy(buf[len(buf):cap(buf)], "#:\n\r\x00#:\n\r\x00#:\n\r\x00 ")
	// Both logs count offsets from the start of buf: prepare re-slices it.
	got := callLog{base: cap(buf)}
	tokenize(prepare(buf), &got)
	want := callLog{base: cap(buf)}
	refTokenize(buf[:min(len(buf), MaxSize)], &want)
	if len(got.calls) != len(want.calls) {
		t.Errorf("tokenize(%q) made %d calls, refTokenize %d", short(body), len(got.calls), len(want.calls))
	}
	for i := range min(len(got.calls), len(want.calls)) {
		if got.calls[i] != want.calls[i] {
			t.Errorf("tokenize(%q) call %d = %s, want %s", short(body), i, got.calls[i], want.calls[i])
			return
		}
	}
}

// short abbreviates a long body for a test message.
func short(b []byte) []byte {
	if len(b) > 200 {
		return append(b[:100:100], "…"...)
	}
	return b
}

// tokenizeSeeds are corpus-like lines and edge cases for the tokenizers.
func tokenizeSeeds() []string {
	long := strings.Repeat("a", maxLineLen)
	return []string{
		"",
		"\n",
		"\r",
		"\r\n",
		"\n\r",
		"User-agent: *\nDisallow: /\n",
		"User-agent: *\r\nDisallow: /a\r\nAllow: /a/b\r\n",
		"User-agent: *\rDisallow: /a\rAllow: /a/b",
		"\xEF\xBB\xBFUser-agent: FooBot\nDisallow: /x",
		"\xEF\xBBUser-agent: FooBot",
		"\xEF\x11\xBFUser-agent: FooBot",
		"\xEFx\xBFUser-agent: FooBot",
		"u\xBBser-agent: *\ndisallow: /",
		"\xEF\xBB\xBF\xEF\xBB\xBFUser-agent: *",
		"\xBB\xBFUser-agent: *",
		"Disallow: /a#b\nDisallow: /a #b\nDisallow:/a#\n#Disallow: /\n  # c\n",
		"Disallow: /a\x00b\nDisallow\x00: /a\n\x00Disallow: /\nAllow: /x:y\x00#:z",
		"disallow /x\ndisallow /x /y\nuser agent: x\nuser agent x\nfoo\n:\n: x\n:x\n x : y \n",
		"User-agent\t:\tFoo\t\nDisallow\v:\f/a\v\nAllow:\r\n\t\n \v\f\r",
		"useragent: a\nuser agent: b\ndissallow: /\ndissalow: /\ndisalow: /\ndiasllow: /\ndisallaw: /\nsite-map: x\nSITEMAPS: y\nDisallowed: /z\n",
		"USER-AGENT: A\nuser-agentX: b\nUser-Agen: c\nALLOWS: /\nAllo: /\ndisallo: /\nsitema: x\nsite-ma: x\nsite map: x\nu\nU: x\nd: x\ns: x\na: x\n",
		"Crawl-delay: 10\nClean-param: a&b /x\nHost: example.com\nSitemap: https://example.com/s.xml#frag\n",
		"Disallow: /a:b:c\nDisallow:: /\nDisallow :/a\nDisallow\t/a\n",
		long + "\n" + long + "x\n" + long + "#\n" + long[:maxLineLen-1] + "#x\n",
		"Disallow: /" + long + "\nAllow: /" + long + "#c:\n" + long + ":x\n" + long[:maxLineLen-1] + ":x\n",
		"Disallow " + long + "\n" + long[:maxLineLen-2] + " x\n" + long[:maxLineLen-1] + "\x00x\n",
		strings.Repeat("x", 3*maxLineLen) + "\r\nDisallow: /\r",
		"a#\nb:#\nc :d#e\nf: g #h\n#\n##\n:#:\n",
		"12345678:12345678#12345678\n1234567\n123456789\n12345678\n",
	}
}

// TestTokenizeReference holds tokenize to refTokenize on the seeds, the
// golden files, the corpus and every short line shape over a small alphabet.
func TestTokenizeReference(t *testing.T) {
	for _, s := range tokenizeSeeds() {
		checkTokenize(t, []byte(s))
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	for _, file := range files {
		robots, _ := goldenSections(t, file)
		checkTokenize(t, robots)
	}
	if entries, err := os.ReadDir(corpusDir); err == nil {
		for _, e := range entries {
			if body, err := os.ReadFile(filepath.Join(corpusDir, e.Name())); err == nil {
				checkTokenize(t, body)
			}
		}
	}
	// Every start of up to 4 bytes over the BOM's bytes and another.
	const bomBytes = "\xEF\xBB\xBFu"
	for n := 0; n <= 4; n++ {
		head := make([]byte, n)
		for i := 0; i < 1<<(2*n); i++ {
			for j := range head {
				head[j] = bomBytes[i>>(2*j)&3]
			}
			checkTokenize(t, append(head[:n:n], "ser-agent: *\ndisallow: /"...))
		}
	}
	// Every string of up to 5 bytes over an alphabet of the special bytes.
	const alphabet = "a: #\x00\r\n\t\v"
	var gen func(prefix []byte)
	gen = func(prefix []byte) {
		checkTokenize(t, prefix)
		if len(prefix) == 5 {
			return
		}
		for i := range len(alphabet) {
			gen(append(prefix, alphabet[i]))
		}
	}
	gen(nil)
}

// FuzzTokenize checks that tokenize makes exactly the calls refTokenize
// makes, with the same lineInfo, keys, values and value offsets.
func FuzzTokenize(f *testing.F) {
	for _, s := range tokenizeSeeds() {
		f.Add([]byte(s))
	}
	addFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		checkTokenize(t, body)
	})
}
