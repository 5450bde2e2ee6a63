package policy

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits of Yandex's robots.txt analyser that the linter checks
// (https://yandex.com/support/webmaster/en/error-dictionary/robots-txt.html;
// docs/robots-semantics.md#lint). The matcher itself has no such limits.
const (
	maxRules         = 2048 // rules (Allow and Disallow lines) per file
	maxRuleLen       = 1024 // characters per rule path
	maxCleanParamLen = 500  // characters per Clean-param value
)

// A Severity grades a [Diagnostic].
type Severity uint8

const (
	// SeverityError: crawlers ignore the line (or the file) or read it
	// differently from what it says: it cannot do what its author meant.
	SeverityError Severity = iota + 1
	// SeverityWarning: a likely mistake. The line is read, by Google and
	// this library at least, but probably does not do what its author
	// meant, or other crawlers read it differently.
	SeverityWarning
)

// String implements fmt.Stringer.
func (s Severity) String() string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	}
	return "Severity(" + strconv.Itoa(int(s)) + ")"
}

// A Diagnostic is one problem [Lint] found in a robots.txt file.
//
// Code is a short stable identifier of the check, one of:
//
//	errors:
//	  too-large               content past MaxSize (500 KiB) is ignored
//	  html                    the body is an HTML page
//	  encoding                the body is UTF-16 or binary, not UTF-8
//	  rule-before-user-agent  Allow/Disallow before any User-agent line
//	  rule-bad-start          rule path starts with neither '/' nor '*'
//	  rule-too-long           rule path longer than 1024 characters (Yandex)
//	  too-many-rules          more than 2048 rules in the file (Yandex)
//	  invalid-sitemap         Sitemap value is not an absolute http(s) URL, or not UTF-8
//	  invalid-clean-param     Clean-param line Yandex ignores: no name, over 500
//	                          characters, more than two fields, a bad path prefix
//	  invalid-crawl-delay     Crawl-delay is not a non-negative number
//	warnings:
//	  line-too-long           line cut at Google's line length limit
//	  nul-byte                a NUL byte hides the rest of its line
//	  invalid-utf8            a directive holds bytes that are not UTF-8
//	  accepted-typo           misspelt or over-long key that Google accepts
//	  missing-colon           whitespace instead of ':' after the key
//	  empty-rule              Allow without a path (a bare Disallow is the
//	                          1994 standard's allow-all idiom: no diagnostic)
//	  multiple-global-groups  a second "User-agent: *" group; RFC 9309 §2.2.1
//	                          merges them, Yandex's analyser rejects it
//	  clean-param-name        Clean-param name Yandex's syntax does not allow
//	  clean-param-path        Clean-param path prefix with a character Yandex's
//	                          syntax does not allow (A-Z a-z 0-9 . - / * _)
//	  noindex                 Noindex or Nofollow line: Google stopped honouring
//	                          them in September 2019
//	  duplicate-rule          the same rule twice in one group
//	  unreachable-rule        a Disallow that never applies: an Allow with the
//	                          same path wins every tie, or it names /robots.txt,
//	                          which is always allowed (RFC 9309 §2.2.2)
//	  empty-group             a last group without rules: its crawlers may fetch
//	                          everything and no longer follow the "*" group
//	  illegal-character       a rule path holds a character not allowed in URLs
//	  literal-dollar          '$' before the end of a rule path
//	  hash-in-value           a '#' right after a value starts a comment
//	  empty-user-agent        User-agent value that names no crawler
//	  user-agent-truncated    User-agent value read as a shorter product token
//	  sitemap-not-file        Sitemap URL that ends in '/'
//	  crawl-delay-no-group    Crawl-delay outside any group
//	  unknown-directive       a key no crawler knows, or a bare URL
//	  syntax-error            a line that is not a directive
type Diagnostic struct {
	// Line is the 1-based line the problem is on, or 0 when it concerns
	// the whole file. Lines are numbered as [Parse] numbers them.
	Line     int
	Severity Severity
	Code     string
	// Message is lower case and names the offending value and any limit.
	Message string
}

// String formats d as "line 3: error: message [code]"; the "line N: "
// prefix is left out for whole-file diagnostics.
func (d Diagnostic) String() string {
	if d.Line == 0 {
		return fmt.Sprintf("%s: %s [%s]", d.Severity, d.Message, d.Code)
	}
	return fmt.Sprintf("line %d: %s: %s [%s]", d.Line, d.Severity, d.Message, d.Code)
}

// Diagnostic codes; see [Diagnostic].
const (
	codeTooLarge        = "too-large"
	codeHTML            = "html"
	codeEncoding        = "encoding"
	codeRuleBeforeAgent = "rule-before-user-agent"
	codeRuleBadStart    = "rule-bad-start"
	codeRuleTooLong     = "rule-too-long"
	codeTooManyRules    = "too-many-rules"
	codeMultipleGlobal  = "multiple-global-groups"
	codeSitemap         = "invalid-sitemap"
	codeCleanParam      = "invalid-clean-param"
	codeCrawlDelay      = "invalid-crawl-delay"
	codeCleanParamName  = "clean-param-name"
	codeCleanParamPath  = "clean-param-path"
	codeNoindex         = "noindex"
	codeDuplicateRule   = "duplicate-rule"
	codeUnreachableRule = "unreachable-rule"
	codeEmptyGroup      = "empty-group"
	codeLineTooLong     = "line-too-long"
	codeNUL             = "nul-byte"
	codeUTF8            = "invalid-utf8"
	codeTypo            = "accepted-typo"
	codeMissingColon    = "missing-colon"
	codeEmptyRule       = "empty-rule"
	codeIllegalChar     = "illegal-character"
	codeLiteralDollar   = "literal-dollar"
	codeHashInValue     = "hash-in-value"
	codeEmptyAgent      = "empty-user-agent"
	codeAgentTruncated  = "user-agent-truncated"
	codeSitemapNotFile  = "sitemap-not-file"
	codeDelayNoGroup    = "crawl-delay-no-group"
	codeUnknown         = "unknown-directive"
	codeSyntax          = "syntax-error"
)

// Lint checks a robots.txt body and returns what crawlers will ignore or
// may misread, sorted by line (whole-file diagnostics, line 0, first) and,
// on one line, in the order the checks ran. A clean file yields nil.
//
// Lint reads the body the way [Parse] does (RFC 9309 §2.2 plus Google's
// tokenizer, docs/robots-semantics.md#tokenizer) and reports, besides what Google silently drops,
// the errors and warnings of Yandex's robots.txt analyser (docs/robots-semantics.md#lint).
// It accepts any bytes, never panics, and runs in time linear in
// min(len(body), MaxSize).
func Lint(body []byte) []Diagnostic {
	read := body
	if len(read) > MaxSize {
		read = read[:MaxSize]
	}
	read = skipBOM(read)

	var l linter
	l.scanLines(read)
	scanned := l.diags
	l.diags = nil
	parse(body, &l)
	l.finish()
	lines := mergeDiagnostics(scanned, l.diags)

	// Whole-file checks.
	var head, tail []Diagnostic
	var quiet []string // codes that are noise once the whole file is wrong
	if enc := encodingProblem(body); enc != "" {
		quiet = []string{codeSyntax, codeUnknown, codeNUL, codeUTF8}
		head = append(head, newDiagnostic(0, SeverityError, codeEncoding,
			"%s; robots.txt must be utf-8 text, so crawlers find almost no directives in it", enc))
	} else if l.htmlLine > 0 {
		quiet = []string{codeSyntax, codeUnknown}
		head = append(head, newDiagnostic(0, SeverityError, codeHTML,
			"file looks like an html page (%s tag on line %d), not a robots.txt; only lines that happen to be valid directives are used",
			l.htmlTag, l.htmlLine))
	}
	if len(body) > MaxSize {
		// The cut line is the last one read, so this sorts last; what the
		// other checks say about its remains ("Di" of a cut "Disallow")
		// is noise.
		if cut := read[len(read)-1]; cut != '\n' && cut != '\r' {
			lines = slices.DeleteFunc(lines, func(d Diagnostic) bool { return d.Line == l.lines })
		}
		tail = append(tail, newDiagnostic(l.lines, SeverityError, codeTooLarge,
			"file is %d bytes; only the first %d bytes (500 KiB) are read, so line %d is cut and everything after it is ignored",
			len(body), MaxSize, l.lines))
	}
	if len(quiet) > 0 {
		n := len(lines)
		lines = slices.DeleteFunc(lines, func(d Diagnostic) bool { return slices.Contains(quiet, d.Code) })
		if hidden := n - len(lines); hidden > 0 {
			if hidden == 1 {
				head[0].Message += " (1 diagnostic about a line that is not a directive left out)"
			} else {
				head[0].Message += fmt.Sprintf(" (%d diagnostics about lines that are not directives left out)", hidden)
			}
		}
	}
	if len(head)+len(lines)+len(tail) == 0 {
		return nil
	}
	return slices.Concat(head, lines, tail)
}

// mergeDiagnostics merges two lists sorted by line; on one line, a's
// diagnostics come first.
func mergeDiagnostics(a, b []Diagnostic) []Diagnostic {
	if len(a) == 0 {
		return b
	}
	out := make([]Diagnostic, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if b[0].Line < a[0].Line {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	out = append(out, a...)
	return append(out, b...)
}

func newDiagnostic(line int, sev Severity, code, format string, args ...any) Diagnostic {
	return Diagnostic{Line: line, Severity: sev, Code: code, Message: fmt.Sprintf(format, args...)}
}

// A linter is the handler that collects diagnostics.
type linter struct {
	diags []Diagnostic

	lines    int    // number of lines read
	htmlLine int    // first line holding an HTML tag, 0 for none
	htmlTag  string // that tag, e.g. "<html"

	seenAgent    bool // a User-agent line has been read
	inRules      bool // the current record has an Allow or Disallow line
	recordGlobal bool // the current record names '*'
	globalLine   int  // line of the first "User-agent: *" group, 0 for none
	rules        int  // Allow and Disallow lines so far

	agentLine  int            // first User-agent line of the current group, 0 for none
	groupLines bool           // the current group has a Crawl-delay line
	groupRules map[uint64]int // ruleKey of the current group's rules → their line
}

// ruleKey is the key of a rule in the duplicate check: a 64-bit FNV-1a
// hash of its path as written, with the kind in the lowest bit. A
// collision (2^-63 for two rules) would report a false duplicate.
func ruleKey(allow bool, path []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range path {
		h ^= uint64(c)
		h *= 1099511628211
	}
	if allow {
		return h | 1
	}
	return h &^ 1
}

// finish makes the checks that need the whole file: a last group that
// names crawlers other than '*' but has no rules, in a file with a '*'
// group, takes them out of the '*' group's rules.
func (l *linter) finish() {
	if l.agentLine == 0 || l.inRules || l.groupLines || l.recordGlobal || l.globalLine == 0 {
		return
	}
	d := newDiagnostic(l.agentLine, SeverityWarning, codeEmptyGroup,
		"the last group has no allow or disallow line, so its crawlers may fetch everything and no longer follow the \"*\" group of line %d (RFC 9309 §2.2.1)", l.globalLine)
	i, _ := slices.BinarySearchFunc(l.diags, d.Line+1, func(e Diagnostic, line int) int { return e.Line - line })
	l.diags = slices.Insert(l.diags, i, d)
}

func (l *linter) add(line int, sev Severity, code, format string, args ...any) {
	l.diags = append(l.diags, newDiagnostic(line, sev, code, format, args...))
}

// scanLines makes the byte-level checks that the tokenizer's callbacks
// cannot: NUL bytes, invalid UTF-8 and HTML tags. It splits lines exactly
// as parse does, so line numbers agree.
func (l *linter) scanLines(body []byte) {
	for {
		i := bytes.IndexAny(body, "\r\n")
		line := body
		if i >= 0 {
			line = body[:i]
		}
		l.lines++
		l.scanLine(l.lines, line)
		if i < 0 {
			return
		}
		if body[i] == '\r' && i+1 < len(body) && body[i+1] == '\n' {
			i++
		}
		body = body[i+1:]
	}
}

func (l *linter) scanLine(num int, line []byte) {
	if len(line) > maxLineLen {
		line = line[:maxLineLen]
	}
	text := line
	if i := bytes.IndexByte(text, 0); i >= 0 {
		text = text[:i]
		if !bytes.ContainsRune(text, '#') && hasContent(line[i:]) {
			l.add(num, SeverityWarning, codeNUL,
				"line holds a NUL byte at column %d; google ignores everything after it on this line", i+1)
		}
	}
	if i := bytes.IndexByte(text, '#'); i >= 0 {
		text = text[:i] // bytes in comments do no harm
	}
	if !utf8.Valid(text) {
		at := invalidUTF8(text)
		l.add(num, SeverityWarning, codeUTF8,
			"byte 0x%02X at column %d is not utf-8; robots.txt must be utf-8, and a path in another encoding does not match the urls it was meant for",
			text[at], at+1)
	}
	if l.htmlLine == 0 {
		if tag := htmlTag(text); tag != "" {
			l.htmlLine, l.htmlTag = num, tag
		}
	}
}

// hasContent reports whether b holds a byte other than white space and NUL.
func hasContent(b []byte) bool {
	for _, c := range b {
		if c != 0 && !isSpace(c) {
			return true
		}
	}
	return false
}

// invalidUTF8 returns the index of the first byte of b that is not part of
// a valid UTF-8 sequence; b must not be valid UTF-8.
func invalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return 0
}

// htmlTag returns the first HTML document tag in line ("<html", "<head",
// "<body" or "<!doctype html"), or "".
func htmlTag(line []byte) string {
	for {
		i := bytes.IndexByte(line, '<')
		if i < 0 {
			return ""
		}
		line = line[i:]
		for _, tag := range [...]string{"<html", "<head", "<body", "<!doctype html"} {
			if hasPrefixFold(line, tag) {
				if len(line) == len(tag) || line[len(tag)] == '>' || isSpace(line[len(tag)]) {
					return tag
				}
			}
		}
		line = line[1:]
	}
}

// encodingProblem describes why body is not UTF-8 text, or returns "".
func encodingProblem(body []byte) string {
	if bytes.HasPrefix(body, []byte{0xFF, 0xFE}) || bytes.HasPrefix(body, []byte{0xFE, 0xFF}) {
		return "file starts with a utf-16 byte order mark"
	}
	head := body[:min(len(body), 512)]
	if n := bytes.Count(head, []byte{0}); n >= 4 && n*4 >= len(head) {
		return fmt.Sprintf("%d of the first %d bytes are NUL, so the file is utf-16 or binary", n, len(head))
	}
	return ""
}

// keyName returns the canonical spelling of a recognised key.
func keyName(k keyKind) string {
	switch k {
	case keyUserAgent:
		return "user-agent"
	case keyAllow:
		return "allow"
	case keyDisallow:
		return "disallow"
	case keySitemap:
		return "sitemap"
	}
	return ""
}

// lineChecks makes the checks every line gets: line length and, for
// directives with the canonical name canonical, a '#' inside the value, key
// spelling and separator. canonical is "" for lines that are not known
// directives.
func (l *linter) lineChecks(ln lineInfo, canonical string, value []byte) {
	if ln.tooLong {
		l.add(ln.num, SeverityWarning, codeLineTooLong,
			"line is longer than %d bytes; google ignores the rest of it", maxLineLen)
	}
	if canonical == "" {
		return
	}
	if ln.hashGlued && len(value) > 0 {
		// RFC 9309 §2.2: '#' starts a comment wherever it stands.
		l.add(ln.num, SeverityWarning, codeHashInValue,
			"'#' starts a comment even inside a value, so the %s value is read as %s", canonical, quote(value))
	}
	switch {
	case len(ln.key) > len(canonical) && bytes.ContainsAny(ln.key[len(canonical):], " \t"):
		// "Disallow /a:b" or "Sitemap https://…": the first ':' won.
		l.add(ln.num, SeverityWarning, codeMissingColon,
			"missing ':' after %q, so the line splits at a later ':' and the key reads %s", canonical, quote(ln.key))
	case ln.typo:
		// Google-specific: see recognise.
		l.add(ln.num, SeverityWarning, codeTypo,
			"%s is a misspelling of %q that google accepts; other crawlers ignore the line", quote(ln.key), canonical)
	case len(ln.key) != len(canonical):
		l.add(ln.num, SeverityWarning, codeTypo,
			"key %s is read as %q only because it starts with it; other crawlers ignore the line", quote(ln.key), canonical)
	}
	if ln.missingColon {
		l.add(ln.num, SeverityWarning, codeMissingColon,
			"missing ':' after %s; google accepts whitespace as the separator, other crawlers ignore the line", quote(ln.key))
	}
}

func (l *linter) userAgent(ln lineInfo, value []byte) {
	l.lineChecks(ln, keyName(keyUserAgent), value)
	// RFC 9309 §2.1: a user-agent line after a rule starts a new group.
	if l.inRules || l.agentLine == 0 {
		l.inRules, l.recordGlobal = false, false
		l.agentLine, l.groupLines = ln.num, false
		clear(l.groupRules)
	}
	l.seenAgent = true
	if isGlobalAgent(value) {
		if l.recordGlobal {
			return // "User-agent: *" twice in one group
		}
		l.recordGlobal = true
		if l.globalLine == 0 {
			l.globalLine = ln.num
			return
		}
		// RFC 9309 §2.2.1 merges them, so this is no error;
		// Yandex's analyser rejects it (docs/robots-semantics.md#lint), and
		// a second group is often one forgotten about.
		l.add(ln.num, SeverityWarning, codeMultipleGlobal,
			"another \"user-agent: *\" group; the first one starts on line %d; crawlers following RFC 9309 merge them, yandex's analyser reports it", l.globalLine)
		return
	}
	token := tokenPrefix(string(value))
	switch {
	case len(value) == 0:
		l.add(ln.num, SeverityWarning, codeEmptyAgent, "user-agent has no value, so the group names no crawler")
	case token == "":
		l.add(ln.num, SeverityWarning, codeEmptyAgent,
			"user-agent %s does not start with a product token (letters, '-' and '_'), so the group names no crawler", quote(value))
	case len(token) < len(value):
		// docs/robots-semantics.md#product-tokens: "googlebot/1.2" and
		// "googlebot*" name googlebot, which is meant; anything else after
		// the token probably is not. A crawler cuts its own name the same
		// way, so "MJ12bot" and "SuperBot/3.1 (Win32)" still name MJ12bot
		// and SuperBot: no mistake. A list of names ("Googlebot, Bingbot")
		// names only its first, and a browser's User-Agent header names
		// "Mozilla".
		if isNameList(value[len(token):]) || equalFold([]byte(token), "mozilla") {
			l.add(ln.num, SeverityWarning, codeAgentTruncated,
				"user-agent %s is read as %q: a product token is only the leading letters, '-' and '_' (RFC 9309 §2.2.1)", quote(value), token)
		}
	}
}

// isNameList reports whether rest, what follows the product token of a
// User-agent value, starts a list of further names: an optional /version,
// then a ',' or ';'.
func isNameList(rest []byte) bool {
	if len(rest) > 0 && rest[0] == '/' {
		i := bytes.IndexAny(rest, " \t,;")
		if i < 0 {
			return false
		}
		rest = rest[i:]
	}
	rest = bytes.TrimLeft(rest, " \t")
	return len(rest) > 0 && (rest[0] == ',' || rest[0] == ';')
}

func (l *linter) rule(ln lineInfo, allow bool, value []byte) {
	kind, key := keyDisallow, "disallow"
	if allow {
		kind, key = keyAllow, "allow"
	}
	l.lineChecks(ln, keyName(kind), value)
	l.rules++
	if l.rules == maxRules+1 {
		l.add(ln.num, SeverityError, codeTooManyRules,
			"this is rule %d; yandex reads at most %d rules per file", l.rules, maxRules)
	}
	if !l.seenAgent {
		// RFC 9309 §2.1: rules before any user-agent line are ignored.
		l.add(ln.num, SeverityError, codeRuleBeforeAgent,
			"%s before any user-agent line belongs to no group and is ignored", key)
		return
	}
	l.inRules = true
	if len(value) == 0 {
		// RFC 9309 §2.2.2: a rule without a path is ignored. A bare
		// Disallow is the 1994 standard's way to allow everything, and a
		// group whose only rule it is does allow everything: no mistake.
		if allow {
			l.add(ln.num, SeverityWarning, codeEmptyRule, "allow without a path is ignored; write \"allow: /\" to allow everything")
		}
		return
	}
	if !allow && (string(value) == "/robots.txt" || string(value) == "/robots.txt$") {
		// RFC 9309 §2.2.2: /robots.txt is always allowed.
		l.add(ln.num, SeverityWarning, codeUnreachableRule,
			"disallow %s never applies: /robots.txt itself is always allowed (RFC 9309 §2.2.2)", quote(value))
	}
	if l.groupRules == nil {
		l.groupRules = make(map[uint64]int)
	}
	// Compared as written: files list "/ä" and "/%C3%A4" on purpose, for
	// crawlers that do not normalise (RFC 9309 §2.2.2).
	k := ruleKey(allow, value)
	if first, dup := l.groupRules[k]; dup {
		l.add(ln.num, SeverityWarning, codeDuplicateRule,
			"%s %s repeats line %d of the same group", key, quote(value), first)
	} else {
		l.groupRules[k] = ln.num
		if first, ok := l.groupRules[k^1]; ok {
			dis := first // this line is the allow
			if !allow {
				dis = ln.num
			}
			l.add(ln.num, SeverityWarning, codeUnreachableRule,
				"allow and disallow %s in one group (lines %d and %d): allow wins the tie, so the disallow on line %d never applies", quote(value), first, ln.num, dis)
		}
	}
	if value[0] != '/' && value[0] != '*' {
		// docs/robots-semantics.md#rule-paths: such a path never matches;
		// this library ignores it.
		hint := ""
		if hasPrefixFold(value, "http://") || hasPrefixFold(value, "https://") {
			hint = "; write the path alone, without scheme and host"
		}
		l.add(ln.num, SeverityError, codeRuleBadStart,
			"%s path %s starts with neither '/' nor '*', so it never matches and is ignored%s", key, quote(value), hint)
		return
	}
	if n := utf8.RuneCount(value); n > maxRuleLen {
		l.add(ln.num, SeverityError, codeRuleTooLong,
			"%s path is %d characters long; the limit is %d (yandex)", key, n, maxRuleLen)
	}
	l.pathChars(ln, key, value)
}

// pathChars warns about characters in a rule path that a URL cannot hold
// unescaped (RFC 3986 §2, docs/robots-semantics.md#normalisation) and about
// a literal '$'.
func (l *linter) pathChars(ln lineInfo, key string, value []byte) {
	illegal, badPercent, dollar := -1, -1, -1
	for i := 0; i < len(value); i++ {
		c := value[i]
		switch {
		case c < 0x80 && mustEscape(c):
			if illegal < 0 {
				illegal = i
			}
		case c == '%':
			if badPercent < 0 && (i+2 >= len(value) || !isHex(value[i+1]) || !isHex(value[i+2])) {
				badPercent = i
			}
		case c == '$':
			if dollar < 0 && i != len(value)-1 {
				dollar = i
			}
		}
	}
	if illegal >= 0 {
		l.add(ln.num, SeverityWarning, codeIllegalChar,
			"%s path %s holds %s at column %d, which urls carry percent-encoded; write \"%%%02X\" so that every crawler matches it",
			key, quote(value), strconv.QuoteRune(rune(value[illegal])), illegal+1, value[illegal])
	}
	if badPercent >= 0 {
		l.add(ln.num, SeverityWarning, codeIllegalChar,
			"%s path %s holds a '%%' at column %d that does not start a %%XX escape; it matches a literal \"%%25\"",
			key, quote(value), badPercent+1)
	}
	if dollar >= 0 {
		// Google-specific: '$' anchors only as the last character.
		l.add(ln.num, SeverityWarning, codeLiteralDollar,
			"%s path %s has '$' at column %d; only a final '$' marks the end of the url, this one matches a literal '$'",
			key, quote(value), dollar+1)
	}
}

func isHex(c byte) bool {
	_, ok := unhex(c)
	return ok
}

func (l *linter) sitemap(ln lineInfo, value []byte) {
	l.lineChecks(ln, keyName(keySitemap), value)
	// RFC 9309 §2.2.4, sitemaps.org: the value is an absolute URL with
	// scheme and host.
	if len(value) == 0 {
		l.add(ln.num, SeverityError, codeSitemap, "sitemap has no url")
		return
	}
	if hasPrefixFold(value, "sitemap:") || hasPrefixFold(value, "site-map:") {
		l.add(ln.num, SeverityError, codeSitemap,
			"sitemap value %s repeats the key; write \"sitemap: <url>\" once", quote(value))
		return
	}
	if !utf8.Valid(value) {
		// The line-level invalid-utf8 warning says where; this says what
		// becomes of the line (sitemap.FromRobots skips it).
		l.add(ln.num, SeverityError, codeSitemap,
			"sitemap url %s is not utf-8: it is skipped (sitemap.FromRobots and Scrapy skip it) or fetched percent-encoded as another url; write it in utf-8, with any other byte percent-encoded (%%FF)", quote(value))
		return
	}
	u, err := url.Parse(string(value))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		l.add(ln.num, SeverityError, codeSitemap, "sitemap url %s is invalid: %v", quote(value), err)
		return
	}
	switch {
	case u.Scheme == "":
		l.add(ln.num, SeverityError, codeSitemap,
			"sitemap url %s is not absolute; write the full url, e.g. \"https://www.example.com/sitemap.xml\"", quote(value))
	case u.Scheme != "http" && u.Scheme != "https":
		l.add(ln.num, SeverityError, codeSitemap,
			"sitemap url %s has scheme %q; only http and https are fetched", quote(value), u.Scheme)
	case u.Host == "":
		l.add(ln.num, SeverityError, codeSitemap, "sitemap url %s has no host", quote(value))
	case u.RawQuery == "" && u.Path == "":
		l.add(ln.num, SeverityWarning, codeSitemapNotFile,
			"sitemap url %s has no path; it should name the sitemap file itself", quote(value))
	case u.RawQuery == "" && strings.HasSuffix(u.Path, "/"):
		// docs/robots-semantics.md#lint: no trailing '/' after the file name.
		l.add(ln.num, SeverityWarning, codeSitemapNotFile,
			"sitemap url %s ends in '/'; it should name the sitemap file itself", quote(value))
	}
}

// isUnusedKey reports whether key is one that other engines define and
// that crawlers recognise but this library does not act on; Google's
// reporting parser lists the same ones as "unused" (reporting_robots_test.cc in
// https://github.com/google/robotstxt; docs/robots-semantics.md#lint).
// Crawl-delay and Clean-param are checked separately.
func isUnusedKey(key []byte) bool {
	for _, k := range [...]string{
		"host", "noindex", "nofollow", "noarchive", "request-rate", "visit-time",
		"revisit-after", "domain", "content-signal", "content-usage",
	} {
		if equalFold(key, k) {
			return true
		}
	}
	return false
}

func (l *linter) other(ln lineInfo, key, value []byte) {
	switch {
	case hasPrefixFold(key, "crawl-delay"):
		l.lineChecks(ln, "crawl-delay", value)
		l.crawlDelay(ln, value)
	case hasPrefixFold(key, "clean-param"):
		l.lineChecks(ln, "clean-param", value)
		l.cleanParam(ln, value)
	case !ln.missingColon && (equalFold(key, "http") || equalFold(key, "https")) && bytes.HasPrefix(value, []byte("//")):
		// "https://example.com/sitemap.xml" splits at its first colon.
		l.lineChecks(ln, "", nil)
		l.add(ln.num, SeverityWarning, codeUnknown,
			"line %s is a bare url, which crawlers ignore; did you forget \"sitemap:\"?", quote(append(append(key[:len(key):len(key)], ':'), value...)))
	case equalFold(key, "noindex") || equalFold(key, "nofollow"):
		l.lineChecks(ln, string(key), value)
		l.add(ln.num, SeverityWarning, codeNoindex,
			"%s in robots.txt is not a rule: google stopped honouring it in september 2019, and other crawlers ignore it; use a robots meta tag or an x-robots-tag header", quote(key))
	case isUnusedKey(key):
		l.lineChecks(ln, string(key), value)
	default:
		l.lineChecks(ln, "", nil)
		hint := ""
		if bytes.HasPrefix(key, []byte("\xEF\xBB\xBF")) || bytes.HasPrefix(key, []byte("ï»¿")) {
			// Google-specific: a BOM is skipped only at the start of the body.
			hint = "; it starts with a byte order mark (or one re-encoded as \"ï»¿\"), which is skipped only at the very start of a utf-8 file"
		} else if s := suggestKey(key); s != "" {
			hint = fmt.Sprintf("; did you mean %q?", s)
		}
		l.add(ln.num, SeverityWarning, codeUnknown, "unknown directive %s is ignored%s", quote(key), hint)
	}
}

// crawlDelay checks a Crawl-delay value the way the builder reads it.
func (l *linter) crawlDelay(ln lineInfo, value []byte) {
	if _, ok := parseDelay(value); !ok {
		l.add(ln.num, SeverityError, codeCrawlDelay,
			"crawl-delay %s is not a non-negative number of seconds; it is ignored", quote(value))
		return
	}
	l.groupLines = true
	if !l.seenAgent {
		l.add(ln.num, SeverityWarning, codeDelayNoGroup,
			"crawl-delay before any user-agent line belongs to no group and is ignored")
	}
}

// cleanParam checks Yandex's "Clean-param: p0[&p1&..&pn] [path]" syntax.
// What parseCleanParam drops, and a path prefix that can match no path,
// are errors: the line does nothing. Empty names ("&utm_source", which
// Yandex's own robots.txt writes) are skipped by Yandex and by
// parseCleanParam alike: no diagnostic. A name Yandex's syntax does not
// allow is a warning: it is kept, but most likely matches no parameter.
func (l *linter) cleanParam(ln lineInfo, value []byte) {
	const syntax = "the syntax is \"clean-param: p1&p2 /path-prefix\""
	fields := strings.Fields(string(value))
	switch {
	case len(fields) == 0:
		l.add(ln.num, SeverityError, codeCleanParam, "clean-param has no parameters, so the line is ignored; %s", syntax)
		return
	case len(fields) > 2:
		l.add(ln.num, SeverityError, codeCleanParam,
			"clean-param %s has %d space-separated parts, not 1 or 2, so the line is ignored; %s", quote(value), len(fields), syntax)
		return
	}
	if n := utf8.RuneCount(value); n > maxCleanParamLen {
		l.add(ln.num, SeverityError, codeCleanParam,
			"clean-param is %d characters long; yandex ignores lines over %d", n, maxCleanParamLen)
		return
	}
	names := 0
	for _, p := range strings.Split(fields[0], "&") {
		if p == "" {
			continue
		}
		names++
		if strings.IndexByte(p, '=') >= 0 {
			l.add(ln.num, SeverityWarning, codeCleanParamName,
				"clean-param name %s holds '='; list parameter names only, without values: as written it matches no parameter", strconv.Quote(p))
			continue
		}
		if i := strings.IndexFunc(p, func(r rune) bool { return !isParamChar(r) }); i >= 0 {
			r, _ := utf8.DecodeRuneInString(p[i:])
			l.add(ln.num, SeverityWarning, codeCleanParamName,
				"clean-param name %s holds %s; names are made of letters, digits, '.', '_', '-' and %%XX escapes",
				strconv.Quote(p), strconv.QuoteRune(r))
		}
	}
	if names == 0 {
		l.add(ln.num, SeverityError, codeCleanParam,
			"clean-param %s names no parameter, so the line is ignored; %s", quote(value), syntax)
		return
	}
	if len(fields) < 2 {
		return
	}
	path := fields[1]
	if path[0] != '/' && path[0] != '*' {
		l.add(ln.num, SeverityError, codeCleanParam,
			"clean-param path %s starts with neither '/' nor '*', so it matches no url; %s", strconv.Quote(path), syntax)
		return
	}
	if i := strings.IndexFunc(path, func(r rune) bool { return !isCleanPathChar(r) }); i >= 0 {
		r, _ := utf8.DecodeRuneInString(path[i:])
		l.add(ln.num, SeverityWarning, codeCleanParamPath,
			"clean-param path %s holds %s; yandex allows only letters, digits, '.', '-', '/', '*' and '_' in the prefix", strconv.Quote(path), strconv.QuoteRune(r))
	}
}

// isCleanPathChar reports whether r may appear in a Clean-param path
// prefix: Yandex allows A-Za-z0-9.-/*_ there.
func isCleanPathChar(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' ||
		r == '.' || r == '-' || r == '/' || r == '*' || r == '_'
}

// isParamChar reports whether r may appear in a Clean-param parameter
// name. Yandex documents letters, digits, '.', '_' and '-'; its own
// robots.txt also uses percent-encoded names ("panorama%5Bspan%5D"), and
// '[' ']' are what those escapes stand for.
func isParamChar(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' ||
		r == '.' || r == '_' || r == '-' || r == '%' || r == '[' || r == ']'
}

func (l *linter) invalid(ln lineInfo, text []byte) {
	l.lineChecks(ln, "", nil)
	var why string
	switch {
	case len(text) > 0 && text[0] == ':':
		why = "it has no key before the ':'"
	case bytes.ContainsAny(text, " \t"):
		why = "it has no ':' and more than two words"
	default:
		why = "it has no ':' separating key and value"
	}
	l.add(ln.num, SeverityWarning, codeSyntax, "line %s is not a directive and is ignored: %s", quote(text), why)
}

// suggestKey returns the known key closest to an unknown one when the two
// differ by at most one edit (two for long keys), or "".
func suggestKey(key []byte) string {
	const maxKey = 24 // bounds the cost per line
	if len(key) > maxKey {
		return ""
	}
	var low [maxKey]byte
	k := appendLower(low[:0], string(key))
	for _, s := range [...]string{"user-agent", "allow", "disallow", "sitemap", "crawl-delay", "clean-param", "host"} {
		limit := 1
		if len(s) > 5 {
			limit = 2
		}
		if editDistance(k, s) <= limit {
			return s
		}
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b; both are short.
func editDistance(a []byte, b string) int {
	var rowBuf [32]int
	row := rowBuf[:0]
	for j := 0; j <= len(b); j++ {
		row = append(row, j)
	}
	for i := 1; i <= len(a); i++ {
		prev := row[0] // distance(a[:i-1], b[:j-1])
		row[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur := min(row[j]+1, row[j-1]+1, prev+cost)
			prev, row[j] = row[j], cur
		}
	}
	return row[len(b)]
}

// equalFold reports whether s equals the lower-case ASCII word, ignoring
// ASCII case.
func equalFold(s []byte, word string) bool {
	return len(s) == len(word) && hasPrefixFold(s, word)
}

// quote returns b as a Go string literal, cut to a readable length.
func quote(b []byte) string {
	const max = 60
	if len(b) <= max {
		return strconv.Quote(string(b))
	}
	cut := max
	for cut > max-utf8.UTFMax && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return strconv.Quote(string(b[:cut]) + "…")
}
