package policy

import "bytes"

// MaxSize is the number of bytes of a robots.txt body that are parsed.
// RFC 9309 §2.5: crawlers must parse at least 500 KiB; Google parses exactly
// that much and ignores the rest (Google's robots.txt documentation, "File
// format":
// https://developers.google.com/search/docs/crawling-indexing/robots/robots_txt).
const MaxSize = 500 << 10

// maxLineLen is the number of bytes of one line that are kept.
// Google-specific: the reference parser keeps 2083×8-1 bytes of a line
// (key, separator and comment included) and drops the rest of that line
// without starting a new one.
const maxLineLen = 2083*8 - 1

// keyKind is the directive a line's key was recognised as.
type keyKind uint8

const (
	keyUnknown keyKind = iota
	keyUserAgent
	keyAllow
	keyDisallow
	keySitemap
)

// lineInfo describes one physical line as the tokenizer saw it.
type lineInfo struct {
	num          int  // 1-based line number
	typo         bool // the key is one of the accepted misspellings
	missingColon bool // whitespace served as the key/value separator
	tooLong      bool // the line was cut at maxLineLen
	hashGlued    bool // a comment's '#' directly follows text, as in "/a#b"
	// key is the trimmed key as written, pointing into the body; nil for
	// lines reported to handler.invalid. The linter names it in messages.
	key []byte
}

// A handler receives the directives of a robots.txt body in file order.
// Values are trimmed, comment-free and point into the body being parsed:
// a handler that keeps one must copy it.
type handler interface {
	// userAgent is called for a User-agent line with its raw value.
	userAgent(ln lineInfo, value []byte)
	// rule is called for an Allow (allow == true) or Disallow line with the
	// path pattern as written.
	rule(ln lineInfo, allow bool, value []byte)
	// sitemap is called for a Sitemap line with its raw value.
	sitemap(ln lineInfo, value []byte)
	// other is called for a key:value line with an unrecognised key
	// (Crawl-delay, Clean-param, Host, typos beyond the accepted ones, …).
	other(ln lineInfo, key, value []byte)
	// invalid is called for a non-empty line that is not a directive:
	// no separator, more than two tokens without a colon, or an empty key.
	// text is the line without its comment, trimmed.
	invalid(ln lineInfo, text []byte)
}

// parse tokenizes body and reports each directive to h.
//
// It follows RFC 9309 §2.2 and Google's reference tokenizer: only the first
// MaxSize bytes are read; a leading (possibly partial) UTF-8 BOM is skipped;
// LF, CR and CRLF each end a line; a NUL byte ends the content of its line;
// everything from '#' on is a comment; keys are recognised by
// case-insensitive prefix, with Google's accepted typos.
func parse(body []byte, h handler) {
	tokenize(prepare(body), h)
}

// prepare cuts body at MaxSize and drops a leading byte order mark.
func prepare(body []byte) []byte {
	if len(body) > MaxSize {
		body = body[:MaxSize]
	}
	return skipBOM(body)
}

// tokenize reports the lines of a prepared body to h. Every value it hands
// to h is a re-slice of body (never a copy), so cap(body)-cap(value) is the
// value's offset in body.
//
// It is written for speed (Parse spends most of its time here): per line,
// one vectorised search for LF and an inline search for the first colon;
// CR, '#' and NUL are rare, so each is found by one search that runs ahead
// of the lines, instead of a test of every byte. FuzzTokenize holds it to
// a plain byte-by-byte reference, call for call.
func tokenize(body []byte, h handler) {
	// The next CR, '#' and NUL at or after the current line, or len(body):
	// most lines have none of them, and each is searched for again only
	// once the tokenizer has passed it, so the body is searched once.
	cr, hash, nul := indexFrom(body, 0, '\r'), indexFrom(body, 0, '#'), indexFrom(body, 0, 0)
	// next is where the line after the current one starts; len(body)+1
	// once the current one is the last, which runs to the end of the body
	// (so text after the last line break is a line too, even if empty).
	for num, next := 1, 0; next <= len(body); num++ {
		start := next
		end := indexFrom(body, start, '\n')
		next = end + 1
		if cr < end {
			// CR ends a line too; CRLF is one line break.
			end, next = cr, cr+1
			if next < len(body) && body[next] == '\n' {
				next++
			}
			cr = indexFrom(body, next, '\r')
		}
		ln := lineInfo{num: num}
		content := end
		if end-start > maxLineLen {
			// Only the first maxLineLen bytes of the line count.
			ln.tooLong = true
			content = start + maxLineLen
		}
		if hash < start {
			hash = indexFrom(body, start, '#')
		}
		if nul < start {
			nul = indexFrom(body, start, 0)
		}
		if stop := min(hash, nul); stop < content {
			// RFC 9309 §2.2: a comment runs to the end of the line.
			// Google-specific: so does a NUL byte (a line is a C string).
			ln.hashGlued = stop == hash && stop > start && !isSpace(body[stop-1])
			content = stop
		}

		// Trim the content; the colon, not being white space, stays inside.
		colon := indexColon(body, start, content)
		for start < content && isSpace(body[start]) {
			start, colon = start+1, colon-1
		}
		if start == content {
			continue // a blank line or a comment
		}
		for isSpace(body[content-1]) {
			content--
		}
		line := body[start:content]
		var key, value []byte
		if colon >= 0 {
			// The line starts and ends with text, so the key is only
			// trimmed on the right and the value on the left.
			key, value = line[:colon], line[colon+1:]
			for len(key) > 0 && isSpace(key[len(key)-1]) {
				key = key[:len(key)-1]
			}
			for len(value) > 0 && isSpace(value[0]) {
				value = value[1:]
			}
			if len(key) == 0 {
				h.invalid(ln, line)
				continue
			}
		} else if key, value = splitMissingColon(line); key == nil {
			h.invalid(ln, line)
			continue
		} else {
			ln.missingColon = true
		}
		kind, typo := recognise(key)
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
}

// splitMissingColon splits a trimmed line without a colon into key and
// value, or returns nil, nil.
//
// Google-specific: a missing colon is accepted when the line is exactly
// two whitespace-separated tokens ("disallow /x").
func splitMissingColon(line []byte) (key, value []byte) {
	i := bytes.IndexAny(line, " \t")
	if i < 0 {
		return nil, nil
	}
	key, value = line[:i], trimSpace(line[i:])
	if bytes.ContainsAny(value, " \t") {
		return nil, nil
	}
	return trimSpace(key), value // trimmed as in "disallow\v /x"
}

// indexFrom returns the index of the first c in b at or after i, or len(b).
func indexFrom(b []byte, i int, c byte) int {
	if j := bytes.IndexByte(b[i:], c); j >= 0 {
		return i + j
	}
	return len(b)
}

// skipBOM drops a UTF-8 byte order mark, or any prefix of one, from the
// start of body, without copying it.
//
// Google-specific: robots.cc ParseRobotsTxt skips a byte while it equals
// the mark's byte EF BB BF at the same position; the first byte that does
// not ends the mark for good, so every byte from there on is kept, even one
// that equals the mark's at its position. A broken mark such as EF 11 BF
// loses only its EF, and "u\xBBser-agent" keeps its BB.
func skipBOM(body []byte) []byte {
	const bom = "\xEF\xBB\xBF"
	n := 0
	for n < len(body) && n < len(bom) && body[n] == bom[n] {
		n++
	}
	return body[n:]
}

// hasPrefixFold reports whether s starts with the lower-case ASCII prefix,
// ignoring ASCII case.
func hasPrefixFold(s []byte, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if lower(s[i]) != prefix[i] {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// isSpace reports whether c is ASCII white space as C's isspace sees it.
func isSpace(c byte) bool {
	return c == ' ' || c-'\t' <= '\r'-'\t' // '\t', '\n', '\v', '\f', '\r'
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}
