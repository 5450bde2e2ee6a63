package directives

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/robotsmw/robotsmw/policy"
)

// Page holds the page-level robots directives a response gives a
// crawler: its X-Robots-Tag header fields and its <meta name="robots"> and
// <meta name="AGENT"> tags (Google: "Robots meta tag, data-nosnippet, and
// X-Robots-Tag specifications"). Directives for every crawler and for the
// agent combine, and the most restrictive wins: a flag set anywhere is
// set, the smallest limit and the earliest date apply.
//
// The zero value means no directive: index and follow.
type Page struct {
	NoIndex      bool // noindex (or none): the page is not to be indexed
	NoFollow     bool // nofollow (or none): its links are not to be followed
	NoArchive    bool // noarchive (Bing: nocache)
	NoSnippet    bool // nosnippet
	NoImageIndex bool // noimageindex
	NoTranslate  bool // notranslate

	// UnavailableAfter is the unavailable_after date, zero if none; the
	// page is to be treated as noindex after it. RFC 822, RFC 850 and ISO
	// 8601 dates are read.
	UnavailableAfter time.Time
	// MaxSnippet is max-snippet: the most characters of a text snippet;
	// 0 means none, -1 no limit (also when absent).
	MaxSnippet int
	// MaxImagePreview is max-image-preview: "none", "standard" or
	// "large"; empty when absent.
	MaxImagePreview string
	// MaxVideoPreview is max-video-preview in seconds; 0 means a still
	// image only, -1 no limit (also when absent).
	MaxVideoPreview int

	// Other holds the directives not known here ("indexifembedded",
	// say), lower-cased, as written: kept, never an error.
	Other []string
}

// noDirectives is the zero Page with its limits at "no limit".
var noDirectives = Page{MaxSnippet: -1, MaxVideoPreview: -1}

// NoIndexAt reports whether the page is noindex at time t: noindex, or
// past its unavailable_after date.
func (d Page) NoIndexAt(t time.Time) bool {
	return d.NoIndex || (!d.UnavailableAfter.IsZero() && !t.Before(d.UnavailableAfter))
}

// Parse returns the directives for agent (a product token or a
// User-Agent; matched as its product token, case-insensitively) in the
// X-Robots-Tag fields of header and the robots <meta> tags of page (a
// document or its <head>; nil for none).
//
// X-Robots-Tag: several fields, each a comma-separated list; an
// "agent: " prefix makes a field's directives apply to that agent only
// ("googlebot: noindex, nofollow"). Meta: name="robots" applies to every
// crawler, name="AGENT" to that one; content is a comma-separated list.
// Directive names are case-insensitive; unknown ones are kept in Other;
// malformed values are ignored, never an error.
func Parse(agent string, header http.Header, page *goquery.Selection) Page {
	d := noDirectives
	token := strings.ToLower(policy.ProductToken(agent))
	for _, field := range header.Values("X-Robots-Tag") {
		d.header(token, field)
	}
	if page != nil {
		page.Find("meta[name][content]").Each(func(_ int, m *goquery.Selection) {
			name, _ := m.Attr("name")
			name = strings.ToLower(strings.TrimSpace(name))
			if name != "robots" && (token == "" || name != token) {
				return
			}
			content, _ := m.Attr("content")
			d.list(content)
		})
	}
	return d
}

// header applies one X-Robots-Tag field for agent token.
func (d *Page) header(token, field string) {
	field = strings.TrimSpace(field)
	// "agent: directives": a first name before ':' that is no directive
	// with a value names the agent the field is for (Google).
	if i := strings.IndexByte(field, ':'); i > 0 {
		name := strings.ToLower(strings.TrimSpace(field[:i]))
		if !strings.ContainsAny(name, ", ;") && !known(name) {
			if name != token {
				return
			}
			field = field[i+1:]
		}
	}
	d.list(field)
}

// known reports whether name is a directive name, and so no agent.
func known(name string) bool {
	switch name {
	case "all", "none", "index", "noindex", "follow", "nofollow", "noarchive", "nocache",
		"nosnippet", "noimageindex", "notranslate", "indexifembedded":
		return true
	}
	return valued(name)
}

// valued reports whether name is a directive written "name: value".
func valued(name string) bool {
	switch name {
	case "unavailable_after", "max-snippet", "max-image-preview", "max-video-preview":
		return true
	}
	return false
}

// list applies a comma-separated list of directives. Lists written with
// spaces or semicolons instead ("noindex nofollow", "noindex; nofollow"),
// common in the wild, are read too: the most restrictive reading wins.
func (d *Page) list(s string) {
	var parts []string
	for _, p := range strings.Split(s, ",") {
		if strings.Contains(p, ":") {
			parts = append(parts, p) // a value may hold spaces: keep whole
			continue
		}
		parts = append(parts, strings.FieldsFunc(p, func(r rune) bool { return r == ';' || r == ' ' || r == '\t' })...)
	}
	for i := 0; i < len(parts); i++ {
		p := strings.TrimSpace(parts[i])
		if p == "" {
			continue
		}
		name, value, hasValue := strings.Cut(p, ":")
		name = strings.ToLower(strings.TrimSpace(name))
		value = strings.TrimSpace(value)
		if name == "unavailable_after" && hasValue {
			// An RFC 850 date holds a comma ("Friday, 25-Jun-10 …"):
			// join the next part when the value alone does not parse.
			t, ok := parseDate(value)
			if !ok && i+1 < len(parts) {
				// The date's own comma split it: the next part is its
				// rest unless it is a directive.
				next := strings.ToLower(strings.TrimSpace(parts[i+1]))
				if n, _, _ := strings.Cut(next, ":"); !known(strings.TrimSpace(n)) {
					t, ok = parseDate(value + "," + parts[i+1])
					i++
				}
			}
			if ok && (d.UnavailableAfter.IsZero() || t.Before(d.UnavailableAfter)) {
				d.UnavailableAfter = t
			}
			continue
		}
		d.apply(name, value, hasValue, p)
	}
}

// apply applies one directive.
func (d *Page) apply(name, value string, hasValue bool, raw string) {
	switch name {
	case "all", "index", "follow":
		// The defaults: nothing to add.
	case "none":
		d.NoIndex, d.NoFollow = true, true
	case "noindex":
		d.NoIndex = true
	case "nofollow":
		d.NoFollow = true
	case "noarchive", "nocache":
		d.NoArchive = true
	case "nosnippet":
		d.NoSnippet = true
	case "noimageindex":
		d.NoImageIndex = true
	case "notranslate":
		d.NoTranslate = true
	case "max-snippet":
		if n, err := strconv.Atoi(value); err == nil && hasValue && n >= -1 {
			d.MaxSnippet = minLimit(d.MaxSnippet, n)
		}
	case "max-video-preview":
		if n, err := strconv.Atoi(value); err == nil && hasValue && n >= -1 {
			d.MaxVideoPreview = minLimit(d.MaxVideoPreview, n)
		}
	case "max-image-preview":
		v := strings.ToLower(value)
		order := []string{"none", "standard", "large"}
		if i := slices.Index(order, v); i >= 0 {
			if j := slices.Index(order, d.MaxImagePreview); j < 0 || i < j {
				d.MaxImagePreview = v
			}
		}
	default:
		if v := strings.ToLower(raw); !slices.Contains(d.Other, v) {
			d.Other = append(d.Other, v)
		}
	}
}

// minLimit returns the more restrictive of two limits where -1 means none.
func minLimit(a, b int) int {
	switch {
	case a < 0:
		return b
	case b < 0:
		return a
	}
	return min(a, b)
}

// dateLayouts are the unavailable_after forms read: RFC 822/1123 (with
// zone names or offsets), RFC 850, ISO 8601 with or without a time, and
// Google's own example form ("25 Jun 2010 15:00:00 PST").
var dateLayouts = []string{
	time.RFC1123, time.RFC1123Z, time.RFC822, time.RFC822Z, time.RFC850,
	"Mon, 2 Jan 2006 15:04:05 MST", "Mon, 2 Jan 2006 15:04:05 -0700",
	"Monday, 02-Jan-2006 15:04:05 MST",
	"2 Jan 2006 15:04:05 MST", "2 Jan 2006 15:04:05 -0700", "2 Jan 2006",
	"2 January 2006 15:04:05 MST", "2 January 2006",
	time.RFC3339, "2006-01-02T15:04:05", "2006-01-02T15:04Z07:00",
	"2006-01-02 15:04:05", "2006-01-02",
}

// usZones are the zone names of RFC 822 that Go does not know the offset
// of unless they are the local zone's.
var usZones = map[string]int{
	"EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6, "PST": -8, "PDT": -7,
}

// parseDate reads an unavailable_after date.
func parseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range dateLayouts {
		t, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		if name, off := t.Zone(); off == 0 {
			if h, ok := usZones[name]; ok {
				t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.FixedZone(name, h*3600))
			}
		}
		return t, true
	}
	return time.Time{}, false
}
