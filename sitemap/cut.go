package sitemap

import "strings"

// A Cut names the bounds that left something out of a walk; Stats.Cut
// holds one bit for each bound that did. A walk on a hostile site (an
// index of 50,000 indexes, millions of URLs, cycles, gzip bombs) ends
// with the bounds it hit named here, each counted in Stats.
type Cut uint8

const (
	// CutURLs: MaxURLs page URLs were passed on; the others were dropped
	// (Dropped.Limit) and no further sitemap was fetched (Skipped.Limit).
	CutURLs Cut = 1 << iota
	// CutSitemaps: MaxSitemaps sitemap files were fetched; the others
	// were not (Skipped.Limit).
	CutSitemaps
	// CutDepth: an index child was past MaxDepth (Skipped.Limit, and a
	// FetchError with ErrTooDeep).
	CutDepth
	// CutSize: a sitemap passed the Reader's limits (50,000 entries or
	// Options.MaxSize, 50 MiB by default; a gzip bomb); it was read up to
	// the limit (a FetchError with ErrTooLarge).
	CutSize
	// CutHosts: the walk looked up the robots.txt of as many hosts for
	// cross-submissions as it may (64 hosts, 4 ports of one host name);
	// pages on further hosts were dropped as out of scope.
	CutHosts
)

var cutNames = [...]string{"urls", "sitemaps", "depth", "size", "hosts"}

// String lists the bounds in c, comma-separated: "urls,depth"; "" for none.
func (c Cut) String() string {
	var b strings.Builder
	for i, name := range cutNames {
		if c&(1<<i) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(name)
	}
	return b.String()
}
