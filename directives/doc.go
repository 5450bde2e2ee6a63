// Package directives reads the page-level robots directives a response
// gives a crawler: its X-Robots-Tag header fields and its robots <meta>
// tags, as Google's "Robots meta tag, data-nosnippet, and X-Robots-Tag
// specifications" define them
// (https://developers.google.com/search/docs/crawling-indexing/robots-meta-tag).
//
// robots.txt says what a crawler may fetch; these directives say what it
// may do with a page it fetched: index it, follow its links, keep a copy.
// A robotsmw Guard reads them for its FollowLinks and Directives; the
// package has no colly dependency and works on an http.Header and a
// parsed document.
package directives
