package policy

import "bytes"

// MaxSize is the number of bytes of a robots.txt body that are parsed.
// RFC 9309 §2.5: crawlers must parse at least 500 KiB; Google parses exactly
// that much and ignores the rest (ROBOTS.md §4).
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
func tokenize(body []byte, h handler) {
	num := 0
	cr := bytes.IndexByte(body, '\r') >= 0 // most files have none to look for
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
		parseLine(num, line, h)
		if i < 0 {
			// The text after the last line break is a line too, even if empty.
			return
		}
		body = body[i+1:]
	}
}

// skipBOM drops a UTF-8 byte order mark, or any prefix of one, from the
// start of body.
//
// Google-specific: each of the first three bytes is dropped when it equals
// the BOM byte at the same position, so a broken mark such as EF 11 BF loses
// its EF and BF. Only in that odd case is a copy made.
func skipBOM(body []byte) []byte {
	const bom = "\xEF\xBB\xBF"
	n := min(len(body), len(bom))
	prefix := 0 // leading bytes that match the BOM
	for prefix < n && body[prefix] == bom[prefix] {
		prefix++
	}
	later := false // a byte after the first mismatch still matches
	for i := prefix + 1; i < n; i++ {
		later = later || body[i] == bom[i]
	}
	if !later {
		return body[prefix:]
	}
	head := make([]byte, 0, len(body))
	for i := 0; i < n; i++ {
		if body[i] != bom[i] {
			head = append(head, body[i])
		}
	}
	return append(head, body[n:]...)
}

// parseLine splits one line into key and value and reports it to h.
func parseLine(num int, line []byte, h handler) {
	ln := lineInfo{num: num}
	if len(line) > maxLineLen {
		line = line[:maxLineLen]
		ln.tooLong = true
	}
	colon := -1 // the first ':', found on the way
	for i, c := range line {
		if c == '#' || c == 0 {
			// RFC 9309 §2.2: comments run to the end of the line.
			// Google-specific: so does a NUL byte (a line is a C string).
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
	colon -= cap(line) - cap(trimmed) // trimSpace re-slices: cap drops by the cut
	line = trimmed
	var key, value []byte
	if colon >= 0 {
		key, value = line[:colon], line[colon+1:]
	} else {
		// Google-specific: a missing colon is accepted when the line is
		// exactly two whitespace-separated tokens ("disallow /x").
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

// recognise classifies a key by case-insensitive prefix, in Google's order.
// It reports whether the key is one of the accepted misspellings.
//
// Google-specific: the prefix test makes "Disallowed" and "Sitemaps" valid;
// the typos "useragent", "user agent", "dissallow", "dissalow", "disalow",
// "diasllow", "disallaw" and "site-map" are accepted.
func recognise(key []byte) (kind keyKind, typo bool) {
	switch lower(key[0]) {
	case 'u':
		switch {
		case hasPrefixFold(key, "user-agent"):
			return keyUserAgent, false
		case hasPrefixFold(key, "useragent"), hasPrefixFold(key, "user agent"):
			return keyUserAgent, true
		}
	case 'a':
		if hasPrefixFold(key, "allow") {
			return keyAllow, false
		}
	case 'd':
		switch {
		case hasPrefixFold(key, "disallow"):
			return keyDisallow, false
		case hasPrefixFold(key, "dissallow"), hasPrefixFold(key, "dissalow"),
			hasPrefixFold(key, "disalow"), hasPrefixFold(key, "diasllow"),
			hasPrefixFold(key, "disallaw"):
			return keyDisallow, true
		}
	case 's':
		switch {
		case hasPrefixFold(key, "sitemap"):
			return keySitemap, false
		case hasPrefixFold(key, "site-map"):
			return keySitemap, true
		}
	}
	return keyUnknown, false
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
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
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
