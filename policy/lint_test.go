package policy

import (
	"bytes"
	"fmt"
	"github.com/robotsmw/robotsmw/internal/sharedtest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// lintSeverity is the severity every diagnostic code must carry
// (docs/robots-semantics.md#lint splits the analyser's checks into errors
// and warnings).
var lintSeverity = map[string]Severity{
	codeTooLarge:        SeverityError,
	codeHTML:            SeverityError,
	codeEncoding:        SeverityError,
	codeRuleBeforeAgent: SeverityError,
	codeRuleBadStart:    SeverityError,
	codeRuleTooLong:     SeverityError,
	codeTooManyRules:    SeverityError,
	codeSitemap:         SeverityError,
	codeCleanParam:      SeverityError,
	codeCrawlDelay:      SeverityError,
	codeMultipleGlobal:  SeverityWarning,
	codeCleanParamName:  SeverityWarning,
	codeCleanParamPath:  SeverityWarning,
	codeNoindex:         SeverityWarning,
	codeDuplicateRule:   SeverityWarning,
	codeUnreachableRule: SeverityWarning,
	codeEmptyGroup:      SeverityWarning,
	codeLineTooLong:     SeverityWarning,
	codeNUL:             SeverityWarning,
	codeUTF8:            SeverityWarning,
	codeTypo:            SeverityWarning,
	codeMissingColon:    SeverityWarning,
	codeEmptyRule:       SeverityWarning,
	codeIllegalChar:     SeverityWarning,
	codeLiteralDollar:   SeverityWarning,
	codeHashInValue:     SeverityWarning,
	codeEmptyAgent:      SeverityWarning,
	codeAgentTruncated:  SeverityWarning,
	codeSitemapNotFile:  SeverityWarning,
	codeDelayNoGroup:    SeverityWarning,
	codeUnknown:         SeverityWarning,
	codeSyntax:          SeverityWarning,
}

// at is an expected diagnostic: "line:code".
func lintAt(line int, code string) string { return fmt.Sprintf("%d:%s", line, code) }

func lintCodes(diags []Diagnostic) []string {
	var s []string
	for _, d := range diags {
		s = append(s, lintAt(d.Line, d.Code))
	}
	return s
}

func lintRules(n int) string {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := range n {
		fmt.Fprintf(&b, "Disallow: /p%d\n", i)
	}
	return b.String()
}

func TestLint(t *testing.T) {
	long := "/" + strings.Repeat("a", 1100)
	tests := []struct {
		name string
		body string
		want []string
	}{
		// Yandex analyser errors (docs/robots-semantics.md#lint).
		{"rule not starting with slash", "User-agent: *\nDisallow: fish/\nAllow: *.php\n",
			[]string{lintAt(2, codeRuleBadStart)}},
		{"rule that is a full url", "User-agent: *\nDisallow: https://example.com/private\n",
			[]string{lintAt(2, codeRuleBadStart)}},
		{"several star groups", "User-agent: *\nDisallow: /a\n\nUser-agent: *\nDisallow: /b\nUser-agent: x\nUser-agent: *\nAllow: /c\n",
			[]string{lintAt(4, codeMultipleGlobal), lintAt(7, codeMultipleGlobal)}},
		{"star twice in one group", "User-agent: *\nUser-agent: *\nDisallow: /\n", nil},
		// Google, grouping: sitemap and unknown lines do not end a group.
		{"star record across sitemap line", "User-agent: *\nSitemap: https://x.test/s.xml\nUser-agent: *\nDisallow: /\n", nil},
		{"2048 rules", lintRules(2048), nil},
		{"2049 rules", lintRules(2049), []string{lintAt(2050, codeTooManyRules)}},
		{"rule before user-agent", "Disallow: /a\n\nUser-agent: *\nDisallow: /b\n",
			[]string{lintAt(1, codeRuleBeforeAgent)}},
		{"empty rule before user-agent", "Disallow:\nUser-agent: *\n",
			[]string{lintAt(1, codeRuleBeforeAgent)}},
		{"rule too long", "User-agent: *\nDisallow: " + long + "\n", []string{lintAt(2, codeRuleTooLong)}},
		{"rule of 1024 characters", "User-agent: *\nDisallow: /" + strings.Repeat("a", 1023) + "\n", nil},
		{"rule of 1024 non-ascii characters", "User-agent: *\nDisallow: /" + strings.Repeat("é", 1023) + "\n", nil},
		{"sitemap written twice", "Sitemap: Sitemap: https://x.test/s.xml\n", []string{lintAt(1, codeSitemap)}},
		{"relative sitemap", "Sitemap: /sitemap.xml\n", []string{lintAt(1, codeSitemap)}},
		{"sitemap without scheme", "Sitemap: www.example.com/sitemap.xml\n", []string{lintAt(1, codeSitemap)}},
		{"ftp sitemap", "Sitemap: ftp://x.test/s.xml\n", []string{lintAt(1, codeSitemap)}},
		{"sitemap without host", "Sitemap: https:///s.xml\n", []string{lintAt(1, codeSitemap)}},
		{"sitemap that is not utf-8", "Sitemap: http://example.com/\xff.xml\n", []string{lintAt(1, codeUTF8), lintAt(1, codeSitemap)}},
		{"sitemap with a utf-8 byte in a comment", "Sitemap: http://example.com/s.xml # \xff\n", nil},
		{"sitemap that does not parse", "Sitemap: http://[::1/s.xml\n", []string{lintAt(1, codeSitemap)}},
		{"empty sitemap", "Sitemap:\n", []string{lintAt(1, codeSitemap)}},
		{"sitemap ending in slash", "Sitemap: https://x.test/sitemap/\nSitemap: https://x.test\n",
			[]string{lintAt(1, codeSitemapNotFile), lintAt(2, codeSitemapNotFile)}},
		{"sitemap ending in slash with a query", "Sitemap: https://x.test/sitemap/?file=sitemap.xml\n", nil},
		// A non-ASCII sitemap URL is no error: it is read as written.
		{"non-ascii sitemap", "Sitemap: https://ja.example.org/テスト-サイトマップ.xml\n", nil},
		{"clean-param fine", "Clean-param: utm_source&utm_medium /articles/\nClean-param: ref\nClean-param: s *.php\nClean-param: panorama%5Bspan%5D&a[b] /maps/\n", nil},
		{"clean-param with a value", "Clean-param: print=1 /news/\n", []string{lintAt(1, codeCleanParamName)}},
		{"clean-param leading ampersand", "Clean-param: &st.cmd\n", nil}, // Yandex's own robots.txt
		{"clean-param path outside yandex's characters", "Clean-param: s /forum/show$thread.php\nClean-param: s /a-b_c/*.php\n", []string{lintAt(1, codeCleanParamPath)}},
		{"clean-param only ampersands", "Clean-param: && /x\n", []string{lintAt(1, codeCleanParam)}},
		{"clean-param over 500", "Clean-param: " + strings.Repeat("a", 501) + "\n", []string{lintAt(1, codeCleanParam)}},
		{"clean-param empty", "Clean-param:\n", []string{lintAt(1, codeCleanParam)}},
		{"clean-param empty name", "Clean-param: a&&b /\n", nil},
		{"clean-param three parts", "Clean-param: a /b /c\n", []string{lintAt(1, codeCleanParam)}},
		{"clean-param bad name", "Clean-param: a$b /\n", []string{lintAt(1, codeCleanParamName)}},
		{"clean-param bad path", "Clean-param: ref articles/\n", []string{lintAt(1, codeCleanParam)}},
		{"clean-param too long", "Clean-param: " + strings.Repeat("a", 501) + "\n", []string{lintAt(1, codeCleanParam)}},
		{"crawl-delay fine", "User-agent: *\nCrawl-delay: 0.5\n", nil},
		{"crawl-delay not a number", "User-agent: *\nCrawl-delay: soon\nCrawl-delay: -1\nCrawl-delay:\n",
			[]string{lintAt(2, codeCrawlDelay), lintAt(3, codeCrawlDelay), lintAt(4, codeCrawlDelay)}},
		{"crawl-delay outside group", "Crawl-delay: 5\n", []string{lintAt(1, codeDelayNoGroup)}},

		// Yandex analyser warnings (docs/robots-semantics.md#lint).
		{"illegal characters", "User-agent: *\nDisallow: /a b\nDisallow: /a\\b\nDisallow: /a|b\nDisallow: /a%zz\nDisallow: /a%2\n",
			[]string{lintAt(2, codeIllegalChar), lintAt(3, codeIllegalChar), lintAt(4, codeIllegalChar), lintAt(5, codeIllegalChar), lintAt(6, codeIllegalChar)}},
		{"legal characters", "User-agent: *\nDisallow: /*.php$\nDisallow: /テ\nDisallow: /%E3%83%86?a=b&c=%7e;x\n", nil},
		{"illegal character and dollar", "User-agent: *\nDisallow: /a b$c%\n",
			[]string{lintAt(2, codeIllegalChar), lintAt(2, codeIllegalChar), lintAt(2, codeLiteralDollar)}},
		{"dollar before the end", "User-agent: *\nDisallow: /a$b\nDisallow: /a$*\n",
			[]string{lintAt(2, codeLiteralDollar), lintAt(3, codeLiteralDollar)}},
		{"unknown directive", "Unicorns: /extinct\nalow: /a\n", []string{lintAt(1, codeUnknown), lintAt(2, codeUnknown)}},
		// An unknown directive is reported wherever it stands.
		{"unknown directive before the first group", "Foo: bar\nUser-agent: *\nDisallow: /a\n", []string{lintAt(1, codeUnknown)}},
		{"unknown directive inside a group", "User-agent: *\nFoo: bar\nDisallow: /a\n", []string{lintAt(2, codeUnknown)}},
		{"unknown directive between groups", "User-agent: a\nDisallow: /a\n\nFoo: bar\n\nUser-agent: b\nDisallow: /b\n",
			[]string{lintAt(4, codeUnknown)}},
		{"unknown directive after sitemap lines", "User-agent: *\nDisallow: /a\nSitemap: https://x.test/s.xml\nFoo: bar\nSitemap: https://x.test/t.xml\nBar: baz\n",
			[]string{lintAt(4, codeUnknown), lintAt(6, codeUnknown)}},
		{"unknown directive after a rule outside any group", "Disallow: /a\nFoo: bar\n",
			[]string{lintAt(1, codeRuleBeforeAgent), lintAt(2, codeUnknown)}},
		{"unknown directive with odd spacing", "  Foo  :  bar  \n\tBar\t:\tbaz\nBaz :\nQux\tquux\nx:y\nFoo\v:\fbar # c\n",
			[]string{lintAt(1, codeUnknown), lintAt(2, codeUnknown), lintAt(3, codeUnknown), lintAt(4, codeUnknown), lintAt(5, codeUnknown), lintAt(6, codeUnknown)}},
		{"unknown directive after cr line ends", "User-agent: *\rFoo: bar\r\nDisallow: /a\rBar: baz",
			[]string{lintAt(2, codeUnknown), lintAt(4, codeUnknown)}},
		{"unknown directive after a long comment", "User-agent: *\n# " + strings.Repeat("x", maxLineLen) + "\nFoo: bar\n",
			[]string{lintAt(3, codeUnknown)}},
		{"unknown directive after a byte order mark", "\xEF\xBB\xBFFoo: bar\nUser-agent: *\n", []string{lintAt(1, codeUnknown)}},
		{"bare url", "https://x.test/sitemap.xml\nhttp://x.test/s.xml\n", []string{lintAt(1, codeUnknown), lintAt(2, codeUnknown)}},
		{"unknown two words", "random line\n", []string{lintAt(1, codeUnknown)}},
		{"known but unused", "Host: example.com\nrequest-rate: 1/5\ncontent-signal: search=yes\n", nil},
		{"noindex and nofollow", "User-agent: *\nNoindex: /x\nnofollow: /y\nDisallow: /z\n", []string{lintAt(2, codeNoindex), lintAt(3, codeNoindex)}},
		{"duplicate rule", "User-agent: *\nDisallow: /a\nAllow: /b\nDisallow: /a\nUser-agent: x\nDisallow: /a\n", []string{lintAt(4, codeDuplicateRule)}},
		{"written two ways is no duplicate", "User-agent: *\nDisallow: /ä\nDisallow: /%C3%A4\n", nil},
		{"disallow that never decides", "User-agent: *\nDisallow: /a\nAllow: /a\n", []string{lintAt(3, codeUnreachableRule)}},
		{"disallow of robots.txt", "User-agent: *\nDisallow: /robots.txt\nDisallow: /robots.txt.bak\n", []string{lintAt(2, codeUnreachableRule)}},
		{"empty last group", "User-agent: *\nDisallow: /a\n\nUser-agent: badbot\n", []string{lintAt(4, codeEmptyGroup)}},
		{"empty last group with crawl-delay", "User-agent: *\nDisallow: /a\n\nUser-agent: slowbot\nCrawl-delay: 5\n", nil},
		{"lone star group", "User-agent: *\n", nil},
		{"bare disallow is allow-all", "User-agent: *\nDisallow:\n", nil},
		{"second star group merged", "User-agent: *\nDisallow: /a\n\nUser-agent: *\nDisallow: /b\n", []string{lintAt(4, codeMultipleGlobal)}},
		{"agent list", "User-agent: Googlebot, Bingbot\nDisallow: /\n", []string{lintAt(1, codeAgentTruncated)}},
		{"agent with digits and version", "User-agent: MJ12bot\nUser-agent: SuperBot/3.1 (Win32)\nDisallow: /\n", nil},
		{"syntax errors", "absolutely random line\n: /a\nfoo\n",
			[]string{lintAt(1, codeSyntax), lintAt(2, codeSyntax), lintAt(3, codeSyntax)}},

		// What Google silently accepts or ignores
		// (docs/robots-semantics.md#tokenizer).
		{"accepted typos", "useragent: a\nuser agent: b\nDissallow: /a\ndisalow: /b\nSite-map: https://x.test/s.xml\n",
			[]string{lintAt(1, codeTypo), lintAt(2, codeTypo), lintAt(3, codeTypo), lintAt(4, codeTypo), lintAt(5, codeTypo)}},
		{"prefix keys", "User-agentfoo: a\nDisallowed: /x\nSitemaps: https://x.test/s.xml\nCrawl-delays: 1\n",
			[]string{lintAt(1, codeTypo), lintAt(2, codeTypo), lintAt(3, codeTypo), lintAt(4, codeTypo)}},
		{"missing colon", "User-agent *\ndisallow /x\ncrawl-delay 5\n",
			[]string{lintAt(1, codeMissingColon), lintAt(2, codeMissingColon), lintAt(3, codeMissingColon)}},
		// The first ':' is the separator, even after intended whitespace.
		{"missing colon before a later colon", "User-agent: *\nDisallow /a:b\nSitemap https://x.test/s.xml\n",
			[]string{lintAt(2, codeMissingColon), lintAt(2, codeRuleBadStart), lintAt(3, codeMissingColon), lintAt(3, codeSitemap)}},
		{"byte order mark mid-file", "User-agent: *\n\xEF\xBB\xBFDisallow: /a\n\xC3\xAF\xC2\xBB\xC2\xBFAllow: /b\n",
			[]string{lintAt(2, codeUnknown), lintAt(3, codeUnknown)}},
		{"hash inside a value", "User-agent: *\nDisallow: /page#top\nDisallow: /a # fine\n#Disallow: /b\nSitemap: https://x&#xFC;.test/s.xml\n",
			[]string{lintAt(2, codeHashInValue), lintAt(5, codeHashInValue), lintAt(5, codeSitemapNotFile)}},
		{"missing path", "User-agent: *\nDisallow:\nAllow:\n", []string{lintAt(3, codeEmptyRule)}},
		{"invalid utf-8", "User-agent: *\nDisallow: /caf\xe9\n# caf\xe9\nDisallow: /a # caf\xe9\n",
			[]string{lintAt(2, codeUTF8)}},
		{"nul byte", "User-agent: *\nDisallow: /a\x00/b\n\x00Disallow: /c\nDisallow: /d # \x00x\nDisallow: /e\x00\x00\n",
			[]string{lintAt(2, codeNUL), lintAt(3, codeNUL)}},
		{"line too long", "User-agent: *\nDisallow: /" + strings.Repeat("a", maxLineLen) + "\nAllow: /b\n",
			[]string{lintAt(2, codeLineTooLong), lintAt(2, codeRuleTooLong)}},
		{"user-agent values", "User-agent:\nUser-agent: *foo\nUser-agent: Foo Bar\nUser-agent: Mozilla/5.0 (compatible; Foo)\nUser-agent: Googlebot/2.1\nUser-agent: googlebot*\nUser-agent: * everyone\nDisallow: /\n",
			[]string{lintAt(1, codeEmptyAgent), lintAt(2, codeEmptyAgent), lintAt(4, codeAgentTruncated)}},
		{"html page", "<!DOCTYPE html>\n<html>\n<head><title>Not found</title></head>\n<body>\nUser-agent: *\nDisallow: /x\n</body></html>\n",
			[]string{lintAt(0, codeHTML)}},
		{"html without doctype", "\xEF\xBB\xBF  <HTML lang=en><body>hello</body></HTML>\n", []string{lintAt(0, codeHTML)}},
		{"html tag in a comment", "# <html> is not served here\nUser-agent: *\nDisallow: /\n", nil},
		{"utf-16", "\xFF\xFEU\x00s\x00e\x00r\x00-\x00a\x00g\x00e\x00n\x00t\x00:\x00 \x00*\x00\n\x00", []string{lintAt(0, codeEncoding)}},
		{"binary", strings.Repeat("\x00\x01", 20), []string{lintAt(0, codeEncoding)}},

		// Line numbering agrees between the byte scan and the tokenizer:
		// CRLF is one break, LF CR two (RFC 9309 §2.2).
		{"mixed line endings", "User-agent: *\r\n\n\rDisallow: /caf\xe9 b\r\n",
			[]string{lintAt(4, codeUTF8), lintAt(4, codeIllegalChar)}},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diags := Lint([]byte(tt.body))
			if g := lintCodes(diags); !slices.Equal(g, tt.want) {
				t.Errorf("Lint(%q) = %q, want %q", lintAbbrev(tt.body), g, tt.want)
				for _, d := range diags {
					t.Log(d)
				}
			}
			checkDiagnostics(t, []byte(tt.body), diags)
		})
	}
}

// TestLintUnknownEverywhere puts an unknown directive after every kind of
// line, with every line break, and wants it reported on its own line.
func TestLintUnknownEverywhere(t *testing.T) {
	before := []string{"", "User-agent: *", "Disallow: /a", "Allow: /b#c", "Sitemap: https://x.test/s.xml", "Sitemap: /rel",
		"# comment", "   ", "\t", "Crawl-delay: 1", "Crawl-delay: soon", "Host: x", "Clean-param: a", "Disallow /x",
		"random words here", "x\x00y", "Useragent: y", "Disallow: /caf\xe9", "a:b:c", "Sitemap https://x.test/a", "Bar: baz",
		"https://x.test/s.xml", strings.Repeat("a", maxLineLen+10)}
	unknown := []string{"Foo: bar", " Foo : bar ", "Foo\tbar", "Foo:", "\tFoo: x # y", "Foo\v:\fbar"}
	for _, b := range before {
		for _, sep := range []string{"\n", "\r\n", "\r"} {
			for _, u := range unknown {
				for _, end := range []string{"", "\n", "\nUser-agent: *\nDisallow: /\n"} {
					head := b + sep
					body := head + u + end
					line := lintCountLines([]byte(head))
					diags := Lint([]byte(body))
					if !slices.ContainsFunc(diags, func(d Diagnostic) bool { return d.Line == line && d.Code == codeUnknown }) {
						t.Errorf("Lint(%q) = %q, want %s", lintAbbrev(body), lintCodes(diags), lintAt(line, codeUnknown))
					}
				}
			}
		}
	}
}

func lintAbbrev(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// checkDiagnostics asserts what holds for every Lint result: lines within
// the file, sorted, known codes with their severity, non-empty messages.
func checkDiagnostics(t *testing.T, body []byte, diags []Diagnostic) {
	t.Helper()
	lines := lintCountLines(body)
	for i, d := range diags {
		if d.Line < 0 || d.Line > lines {
			t.Errorf("Lint: %v: line outside 0..%d", d, lines)
		}
		if i > 0 && diags[i-1].Line > d.Line {
			t.Errorf("Lint: %v comes after %v", d, diags[i-1])
		}
		if sev, ok := lintSeverity[d.Code]; !ok || sev != d.Severity {
			t.Errorf("Lint: %v: severity %v, want %v (known code: %v)", d, d.Severity, sev, ok)
		}
		if d.Message == "" || d.Message != strings.ToLower(d.Message[:1])+d.Message[1:] {
			t.Errorf("Lint: %v: message empty or capitalised", d)
		}
	}
}

// countLines counts lines as RFC 9309 §2.2 does: CR, LF and CRLF each end
// one, and the text after the last break is a line too.
func lintCountLines(body []byte) int {
	n := 1
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '\n':
			n++
		case '\r':
			n++
			if i+1 < len(body) && body[i+1] == '\n' {
				i++
			}
		}
	}
	return n
}

// TestLintMessages pins the wording that names values and limits.
func TestLintMessages(t *testing.T) {
	tests := []struct {
		body string
		want string // substring of the first diagnostic's String()
	}{
		{"User-agent: *\nDisallow: /" + strings.Repeat("a", 1099) + "\n", "line 2: error: disallow path is 1100 characters long; the limit is 1024"},
		{"User-agent: *\nDisallow: /a\nUser-agent: *\nAllow: /b\n", "the first one starts on line 1"},
		{"Sitemap: Sitemap: https://x.test/s.xml\n", "repeats the key"},
		{"https://x.test/s.xml\n", "did you forget \"sitemap:\"?"},
		{"alow: /a\n", "did you mean \"allow\"?"},
		{"User-agent: *\nDissallow: /a\n", "\"Dissallow\" is a misspelling of \"disallow\""},
		{"User-agent: *\nDisallowed: /a\n", "key \"Disallowed\" is read as \"disallow\""},
		{"User-agent: *\nDisallow: fish/\n", "\"fish/\" starts with neither '/' nor '*'"},
		{"User-agent: *\nDisallow: /a b\n", "holds ' ' at column 3, which urls carry percent-encoded; write \"%20\""},
		{"User-agent: *\nAllow:\n", "allow without a path"},
		{"User-agent: *\nCrawl-delay: soon\n", "crawl-delay \"soon\" is not a non-negative number"},
		{"Disallow: /x\n", "line 1: error: disallow before any user-agent line"},
		{"User-agent: *\nDisallow: /caf\xe9\n", "byte 0xE9 at column 15"},
		{"\xEF\xBB\xBFUser-agent: *\n\xEF\xBB\xBFDisallow: /a\n", "line 2: warning: unknown directive \"\\ufeffDisallow\" is ignored; it starts with a byte order mark"},
		{"User-agent: *\nSitemap https://x.test/s.xml\n", "missing ':' after \"sitemap\", so the line splits at a later ':' and the key reads \"Sitemap https\""},
		{"Sitemap: https://x&#xFC;.test/s.xml\n", "line 1: warning: '#' starts a comment even inside a value, so the sitemap value is read as \"https://x&\""},
		{"User-agent: Googlebot, Bingbot\nDisallow: /\n", "user-agent \"Googlebot, Bingbot\" is read as \"Googlebot\""},
	}
	for _, tt := range tests {
		diags := Lint([]byte(tt.body))
		if len(diags) == 0 || !strings.Contains(diags[0].String(), tt.want) {
			t.Errorf("Lint(%q) = %v, want a first diagnostic containing %q", lintAbbrev(tt.body), diags, tt.want)
		}
	}
}

func TestLintTooLarge(t *testing.T) {
	// The cut falls inside line 3: 2 short lines, then one of MaxSize bytes.
	body := []byte("User-agent: *\nDisallow: /a\n# " + strings.Repeat("x", MaxSize) + "\nDisallow: /b\n")
	diags := Lint(body)
	want := []string{lintAt(3, codeTooLarge)}
	if g := lintCodes(diags); !slices.Equal(g, want) {
		t.Fatalf("Lint(%d bytes) = %q, want %q", len(body), g, want)
	}
	if msg := diags[0].Message; !strings.Contains(msg, "512000 bytes (500 KiB)") || !strings.Contains(msg, "line 3 is cut") {
		t.Errorf("Lint(%d bytes) message = %q, want the limit and line 3 named", len(body), msg)
	}
	checkDiagnostics(t, body, diags)
}

func TestLintCutInsideADirective(t *testing.T) {
	// A file of rules whose 500 KiB cut falls inside "Disallow": the
	// remains ("Di") are not reported as a line that is no directive.
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := 0; b.Len() < MaxSize-2; i++ {
		fmt.Fprintf(&b, "Disallow: /p%07d\n", i)
	}
	body := []byte(b.String())
	body = append(body[:MaxSize-2], "Disallow: /last\n"...)
	if string(body[MaxSize-2:MaxSize]) != "Di" {
		t.Fatalf("test body cut at %q, want \"Di\"", body[MaxSize-2:MaxSize])
	}
	diags := Lint(body)
	for _, d := range diags {
		if d.Code != codeTooLarge && d.Code != codeTooManyRules {
			t.Errorf("Lint(cut inside a directive) = %v, want only %s (and %s)", d, codeTooLarge, codeTooManyRules)
		}
	}
}

func TestLintClean(t *testing.T) {
	body := []byte(`# robots.txt for www.example.com
User-agent: Googlebot-News
User-agent: Googlebot/2.1
Disallow: /fish
Allow: /fish/salmon.html
Allow: /$

User-agent: *
Crawl-delay: 2
Disallow: /*.php$
Disallow: /private/   # not for you
Allow: /private/public/
Disallow: /%E3%83%86
Disallow: /テスト

Clean-param: utm_source&utm_medium /articles/
Host: www.example.com
Sitemap: https://www.example.com/sitemap.xml
Sitemap: https://ja.example.org/テスト-サイトマップ.xml
`)
	if diags := Lint(body); diags != nil {
		t.Errorf("Lint(clean file) = %v, want nil", diags)
	}
}

func TestDiagnosticString(t *testing.T) {
	tests := []struct {
		d    Diagnostic
		want string
	}{
		{Diagnostic{Line: 3, Severity: SeverityError, Code: "c", Message: "m"}, "line 3: error: m [c]"},
		{Diagnostic{Line: 0, Severity: SeverityWarning, Code: "c", Message: "m"}, "warning: m [c]"},
		{Diagnostic{Line: 1, Severity: 0, Code: "c", Message: "m"}, "line 1: Severity(0): m [c]"},
	}
	for _, tt := range tests {
		if g := tt.d.String(); g != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.d, g, tt.want)
		}
	}
}

// TestLintNoPanic feeds Lint inputs built to reach edge cases of every
// check; arbitrary bytes are the fuzz target's job.
func TestLintNoPanic(t *testing.T) {
	pieces := []string{"", ":", "#", "\x00", "\r", "\n", "\r\n", " ", "\xEF", "\xEF\xBB", "\xEF\xBB\xBF", "\xFF\xFE",
		"Disallow:", "Allow", "User-agent:", "*", "$", "%", "%a", "Sitemap:", "http://", "[", "Clean-param:", "&",
		"Crawl-delay:", "1e999", "NaN", "<html", "<body>", "\xe9", "https:"}
	for _, a := range pieces {
		for _, b := range pieces {
			for _, c := range pieces {
				body := []byte(a + b + c)
				checkDiagnostics(t, body, Lint(body))
			}
		}
	}
}

// TestLintCorpus lints the real-world files: no panics, valid lines and
// messages; the one file over 500 KiB reports it. With -v it prints the
// number of diagnostics per code.
func TestLintCorpus(t *testing.T) {
	dir := corpusDir
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if dir == "" || err != nil || len(files) == 0 {
		t.Skip(sharedtest.Missing("robots"))
	}
	counts := map[string]int{}
	withCode := map[string]int{}
	large := 0
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		diags := Lint(body)
		checkDiagnostics(t, body, diags)
		seen := map[string]bool{}
		for _, d := range diags {
			counts[d.Code]++
			if !seen[d.Code] {
				seen[d.Code] = true
				withCode[d.Code]++
			}
		}
		if len(body) > MaxSize {
			large++
			if !slices.ContainsFunc(diags, func(d Diagnostic) bool { return d.Code == codeTooLarge }) {
				t.Errorf("Lint(%s) (%d bytes) reports no %s", filepath.Base(f), len(body), codeTooLarge)
			}
		}
	}
	if large == 0 {
		t.Errorf("corpus has no file over %d bytes; expected the 853 KB one", MaxSize)
	}
	codes := make([]string, 0, len(counts))
	for c := range counts {
		codes = append(codes, c)
	}
	sort.Slice(codes, func(i, j int) bool { return counts[codes[i]] > counts[codes[j]] })
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d files\n| code | severity | diagnostics | files |\n|---|---|---|---|\n", len(files))
	for _, c := range codes {
		fmt.Fprintf(&b, "| %s | %v | %d | %d |\n", c, lintSeverity[c], counts[c], withCode[c])
	}
	t.Log("\n" + b.String())
}

func BenchmarkLint(b *testing.B) {
	body := []byte(lintRules(2000) + "Sitemap: https://x.test/s.xml\nClean-param: a&b /x\nfoo bar baz\n")
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		Lint(body)
	}
}

// TestLintUnreachableRuleNamesTheDisallow: the message names the line of
// the disallow that never applies, whichever of the two comes first.
func TestLintUnreachableRuleNamesTheDisallow(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"User-agent: *\nDisallow: /a\nAllow: /a\n", "the disallow on line 2 never applies"},
		{"User-agent: *\nAllow: /a\nDisallow: /a\n", "the disallow on line 3 never applies"},
	} {
		found := false
		for _, d := range Lint([]byte(tc.body)) {
			if d.Code == codeUnreachableRule {
				found = true
				if !strings.Contains(d.Message, tc.want) {
					t.Errorf("Lint(%q): %q, want it to say %q", tc.body, d.Message, tc.want)
				}
			}
		}
		if !found {
			t.Errorf("Lint(%q): no %s diagnostic", tc.body, codeUnreachableRule)
		}
	}
}
