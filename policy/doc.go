// Package policy implements robots.txt as specified by RFC 9309, with
// Google's documented interpretation, and fetches and caches robots.txt per
// origin for crawlers.
//
// # Parsing and matching
//
// [Parse] compiles a robots.txt body once; [Robots.Allowed] then answers any
// number of checks, concurrently, without allocating. [Robots.Explain] says
// which group and which line decided a check, and [Lint] reports what the
// parser ignored or what other engines would reject. [Robots.Groups] lists
// the groups, their User-agent lines and rules, for tools that describe a
// file.
//
//	r := policy.Parse(body)
//	agent := policy.ProductToken("ExampleBot/1.0 (+https://example.org/bot)")
//	if !r.Allowed(agent, u) {
//		fmt.Println(r.Explain(agent, u)) // disallowed by line 4: disallow: /private (group "*")
//	}
//
// Matching follows RFC 9309 §2.2: one group applies (the merged group naming
// the agent's product token, else the merged '*' group); of its rules, the
// one with the longest normalised pattern that matches wins, Allow on a tie;
// '*' matches any run of octets and a final '$' anchors the end.
// No regular expressions are used: a check costs at most one pass over the
// URL per candidate rule, so it stays linear in the file and the URL (no
// backtracking; most rules are ruled out without a pass). A hostile file
// of thousands of wildcard rules still costs milliseconds against a URL
// of kilobytes that holds every octet they need, and slows only the
// checks of its own site's URLs.
//
// # Deliberate choices
//
// Where the sources differ, this package follows docs/robots-semantics.md
// in this repository:
//   - Both the rule and the URL are normalised before comparison
//     (RFC 9309 §2.2.2): bytes that may not stand in a URI are
//     percent-encoded, escape hex is upper-cased, escapes of unreserved
//     characters are decoded. Google's matcher normalises only the rule.
//   - A rule that starts with neither '/' nor '*' never matches.
//   - The agent passed to Allowed is a product token, compared whole;
//     [ProductToken] extracts it from a User-Agent header.
//   - Crawl-delay and Yandex's Clean-param are read ([Robots.CrawlDelay],
//     [Robots.CleanParams]); Google ignores both. [Robots.Canonical]
//     applies Clean-param: a URL without the parameters it names.
//
// Google-specific behaviour that is kept: only the first [MaxSize] bytes
// are read; a partial BOM is skipped; lines are cut at 16,663 bytes; a NUL
// ends a line; keys match by case-insensitive prefix, with Google's accepted
// typos ("useragent", "disalow", "site-map", …); a missing colon is accepted
// between exactly two tokens; rule priority counts every octet of the
// normalised pattern, '*' and '$' included; "Allow: /a/index.html" also
// allows "/a/".
//
// # Fetching and caching
//
// [Cache] fetches /robots.txt per origin and applies RFC 9309 §2.3: 2xx is
// parsed, 4xx allows everything, 429, 5xx and network errors disallow
// everything until a retry succeeds (keeping the last good copy when there
// is one). Cached policies expire after 24 hours or as Cache-Control says.
//
// # Concurrency
//
// A [Robots] is immutable and safe for concurrent use. A [Cache] is safe for
// concurrent use by multiple goroutines; its fields must not be changed
// after its first use.
package policy
