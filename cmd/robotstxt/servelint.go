package main

import (
	"context"

	"github.com/robotsmw/robotsmw/policy"
)

// A lintRequest asks for the diagnostics of a robots.txt (POST /api/lint).
type lintRequest struct {
	Robots string `json:"robots"`
}

// A lintResponse holds policy.Lint's diagnostics in its order (by line,
// whole-file ones first) and their counts.
type lintResponse struct {
	Diagnostics []diagnostic `json:"diagnostics"`
	Errors      int          `json:"errors"`
	Warnings    int          `json:"warnings"`
}

// A diagnostic is a policy.Diagnostic with a hint on how to fix it.
type diagnostic struct {
	Line     int    `json:"line"` // 0: the whole file
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Message  string `json:"message"`
	Hint     string `json:"hint,omitempty"`
}

func (s *server) lint(_ context.Context, req *lintRequest) (*lintResponse, error) {
	if err := checkBody("robots", req.Robots); err != nil {
		return nil, err
	}
	resp := &lintResponse{Diagnostics: []diagnostic{}}
	for _, d := range policy.Lint([]byte(req.Robots)) {
		switch d.Severity {
		case policy.SeverityError:
			resp.Errors++
		case policy.SeverityWarning:
			resp.Warnings++
		}
		resp.Diagnostics = append(resp.Diagnostics, diagnostic{
			Line: d.Line, Severity: d.Severity.String(), Code: d.Code, Message: d.Message, Hint: lintHint(d.Code),
		})
	}
	return resp, nil
}

// lintHint says how to fix what a check of policy.Lint reports, by its
// code; "" for a code without a hint.
func lintHint(code string) string {
	switch code {
	case "too-large":
		return "keep the file under 500 KiB: merge rules with '*' patterns or drop rules for paths that no longer exist"
	case "html":
		return "serve the plain-text robots.txt at /robots.txt (Content-Type: text/plain), not an HTML page such as a soft 404 or a login page"
	case "encoding":
		return "save the file as UTF-8 text"
	case "rule-before-user-agent":
		return "put a User-agent line above this rule: rules before the first User-agent line belong to no group"
	case "rule-bad-start":
		return "start the path with '/' (or '*'), as in Disallow: /private/"
	case "rule-too-long":
		return "shorten the path to 1024 characters or fewer; a '*' can stand for the part that varies"
	case "too-many-rules":
		return "stay within 2048 Allow and Disallow lines: merge rules with '*' patterns"
	case "multiple-global-groups":
		return "merge the User-agent: * groups into one, so that every crawler reads the same rules"
	case "invalid-sitemap":
		return "write the sitemap's full URL, with https:// and the host"
	case "invalid-clean-param":
		return "write Clean-param: p1&p2 /path-prefix: parameter names joined by '&', then an optional path prefix"
	case "invalid-crawl-delay":
		return "write the delay in seconds as a number, such as Crawl-delay: 2.5"
	case "clean-param-name":
		return "list parameter names only (letters, digits, '.', '_', '-' and %XX escapes), without values, joined by '&'"
	case "noindex":
		return "remove the line: Google stopped honouring Noindex and Nofollow in robots.txt in 2019; use a robots meta tag or an X-Robots-Tag header"
	case "duplicate-rule":
		return "remove the second copy: it changes nothing"
	case "unreachable-rule":
		return "remove the Disallow, or change its path: an Allow with the same path wins every tie"
	case "empty-group":
		return "add the rules meant for these crawlers (Disallow: with no path allows everything), or remove the group so that they follow the * group"
	case "line-too-long":
		return "split the line: Google reads only the first 16,663 bytes of a line"
	case "nul-byte":
		return "remove the NUL byte: the rest of its line is ignored"
	case "invalid-utf8":
		return "save the file as UTF-8, and percent-encode non-ASCII characters in paths"
	case "accepted-typo":
		return "spell the key as the standard does (User-agent, Allow, Disallow, Sitemap): only Google accepts this spelling"
	case "missing-colon":
		return "put a ':' right after the key"
	case "empty-rule":
		return "a Disallow without a path allows everything; write a path, or Allow: / to say so plainly"
	case "illegal-character":
		return "percent-encode the character (a space is %20)"
	case "literal-dollar":
		return "'$' anchors only at the end of a path; write a literal dollar as %24"
	case "hash-in-value":
		return "'#' starts a comment even inside a path; write %23 if it is part of the path"
	case "empty-user-agent":
		return "name a crawler's product token, such as User-agent: Googlebot, or * for every crawler"
	case "user-agent-truncated":
		return "write only the product token (letters, '-' and '_'), such as Googlebot, without version or URL"
	case "sitemap-not-file":
		return "point Sitemap at a sitemap file, such as /sitemap.xml, not a directory"
	case "crawl-delay-no-group":
		return "put Crawl-delay inside a group, after its User-agent lines"
	case "unknown-directive":
		return "check the spelling: crawlers ignore keys they do not know"
	case "syntax-error":
		return "write key: value, or start the line with '#' to make it a comment"
	}
	return ""
}
