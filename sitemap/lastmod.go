package sitemap

import (
	"strings"
	"time"
)

// parseTime parses a date of a sitemap or feed: the six W3C Datetime forms
// of sitemaps.org <lastmod> (docs/sitemaps.md, case 62), the deviations
// seen in the wild (case 63: a space instead of T, no zone, "+0100",
// "2024/01/01"), and the RFC 822/1123 dates of RSS <pubDate> with or without
// weekday, with two-digit years (case 86). A value without a zone is read as
// UTC. ok is false when no form matches.
func parseTime(s string) (t time.Time, ok bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, false
	}
	// time.Parse has a fast path for exactly this layout; it accepts
	// fractional seconds too.
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, true
	}
	for _, layout := range [...]string{
		"2006-01-02",
		"2006-01-02T15:04Z07:00",
		"2006-01-02T15:04:05Z0700",
		"2006-01-02T15:04:05",
		"2006-01-02 15:04:05",
		"2006-01-02 15:04:05Z07:00",
		"2006-01-02 15:04:05 Z07:00",
		"2006-01-02T15:04",
		"2006-01",
		"2006",
		"2006/01/02",
		"Mon, 2 Jan 2006 15:04:05 MST",
		"Mon, 2 Jan 2006 15:04:05 -0700",
		"2 Jan 2006 15:04:05 MST",
		"2 Jan 2006 15:04:05 -0700",
		"Mon, 2 Jan 06 15:04:05 MST",
		"Mon, 2 Jan 06 15:04:05 -0700",
		"2 Jan 06 15:04:05 MST",
		"2 Jan 06 15:04:05 -0700",
		"Mon, 2 Jan 2006 15:04 MST",
		"Mon, 2 Jan 2006 15:04 -0700",
	} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
