package sitemap

import (
	"strconv"
	"strings"
	"time"
)

// An Entry is one <url> of a urlset, one <sitemap> of a sitemap index, one
// item or entry of an RSS or Atom feed, or one line of a text sitemap.
//
// Values that are absent or malformed are left at their "absent" value; a
// bad value never costs the entry or the file (docs/sitemaps.md, cases 63-67).
//
// An Entry shares no memory with the Reader or with other entries.
type Entry struct {
	// Loc is the URL, trimmed of white space (including U+00A0 and the
	// other Unicode spaces, docs/sitemaps.md, case 39), with entities and CDATA
	// sections decoded and joined (case 38). It is never empty and at most
	// 2,048 characters long (sitemaps.org XSD; case 97). Relative URLs are
	// returned as written: resolving them needs the file's URL (case 71, case 90).
	Loc string

	// LastMod is <lastmod> (any W3C Datetime form, docs/sitemaps.md,
	// case 62, and the common deviations of case 63), an RSS <pubDate> or
	// <dc:date>, or an Atom <updated>, <modified>, <published> or <issued>.
	// A value without a zone is read as UTC. Zero if absent or unparseable.
	LastMod time.Time

	// Index reports whether Loc names another sitemap: the entry comes
	// from a <sitemapindex> (sitemaps.org "Using Sitemap index files").
	Index bool

	// ChangeFreq is <changefreq> in lower case: "always", "hourly",
	// "daily", "weekly", "monthly", "yearly" or "never"; empty if absent
	// or any other value (docs/sitemaps.md, case 65).
	ChangeFreq string

	// Priority is <priority>, between 0 and 1; -1 if absent or invalid
	// (docs/sitemaps.md, case 64). The protocol's default is 0.5.
	Priority float64

	// Alternates are the entry's <xhtml:link rel="alternate"> elements
	// (Google hreflang; docs/sitemaps.md, case 44). Links without href are
	// left out.
	Alternates []Alternate

	// Images and Videos count the entry's <image:image> and <video:video>
	// elements. Their URLs are never returned as entries: they are not
	// pages (docs/sitemaps.md, case 43).
	Images, Videos int

	// News holds the entry's <news:news> element, nil if none (case 66).
	News *News

	// Tag and AlternateOf are set by a Walker only. Tag is the Tag of the
	// Options.Rules rule that matched the page, "" without Rules.
	// AlternateOf is, for an hreflang alternate passed on as a page of its
	// own (Options.Alternates), the Loc of the entry that listed it.
	Tag, AlternateOf string
}

// An Alternate is one hreflang alternate of a page.
type Alternate struct {
	Hreflang string // the hreflang attribute, "x-default" or a language tag
	Href     string // the alternate page's URL
}

// News is the Google News extension of an entry
// (https://developers.google.com/search/docs/crawling-indexing/sitemaps/news-sitemap;
// docs/sitemaps.md, case 66). Empty fields were absent or empty in the
// file.
type News struct {
	Name            string    // <news:publication><news:name>
	Language        string    // <news:publication><news:language>
	PublicationDate time.Time // <news:publication_date>; zero if absent or unparseable
	Title           string    // <news:title>
}

// changeFreq returns the sitemaps.org changefreq value s names, ignoring
// case and surrounding space, or "" (docs/sitemaps.md, case 65).
func changeFreq(s string) string {
	s = strings.TrimSpace(s)
	for _, v := range [...]string{"always", "hourly", "daily", "weekly", "monthly", "yearly", "never"} {
		if strings.EqualFold(s, v) {
			return v
		}
	}
	return ""
}

// priority returns the <priority> value s names, or -1 when s is no decimal
// between 0.0 and 1.0 (sitemaps.org; docs/sitemaps.md, case 64: "0,5",
// "NaN", "1.1" are invalid).
func priority(s string) float64 {
	p, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !(p >= 0 && p <= 1) {
		return -1
	}
	return p
}
