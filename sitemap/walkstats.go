package sitemap

import (
	"errors"
	"fmt"
	"strings"
)

// Stats counts what a [Walker.Walk] found and did.
type Stats struct {
	Sitemaps    int // sitemap files fetched and read (indexes included)
	NotModified int // sitemaps a conditional refetch found unchanged (304): not read again
	Failed      int // sitemap files that could not be read, or only in part: see the WalkError
	URLs        int // page URLs passed to the callback
	Large       int // sitemap files past Options.WarnSize (read as usual)

	// Dropped counts the page entries that were not passed on, by reason.
	Dropped Drops
	// Skipped counts the sitemap URLs (Sitemap lines and index children)
	// that were not fetched, by reason: Robots counts sitemaps
	// robots.txt disallows, Duplicate those fetched already in this walk
	// (self-listing indexes, cycles, redirects to a sitemap seen, robots.txt
	// listed as a sitemap), Limit those past MaxDepth or MaxSitemaps.
	Skipped Drops

	// Cut names the bounds that left something out of the walk (MaxURLs,
	// MaxSitemaps, MaxDepth, a sitemap's size, the cross-submission hosts);
	// zero when none did.
	Cut Cut
}

// Drops counts entries left out, by reason.
type Drops struct {
	Scope     int // outside the sitemap's scope (host, or path in Strict mode; sitemaps.org)
	Filter    int // Filter, Follow, Since, Include, Exclude or Rules left it out
	Robots    int // robots.txt disallows it for the Walker's agent
	Duplicate int // seen before in this walk
	Limit     int // past MaxURLs (pages), MaxDepth or MaxSitemaps (sitemaps)
	Invalid   int // no usable URL: none, empty, over 2,048 characters, not http or https with a host (even resolved), or bytes that are not UTF-8
}

// Total returns the sum of the counts.
func (d Drops) Total() int {
	return d.Scope + d.Filter + d.Robots + d.Duplicate + d.Limit + d.Invalid
}

func (d *Drops) add(o Drops) {
	d.Scope += o.Scope
	d.Filter += o.Filter
	d.Robots += o.Robots
	d.Duplicate += o.Duplicate
	d.Limit += o.Limit
	d.Invalid += o.Invalid
}

// ErrTooDeep is the Err of the [FetchError] recorded for an index child
// past the Walker's MaxDepth (docs/sitemaps.md, case 75).
var ErrTooDeep = errors.New("sitemap: index nested deeper than MaxDepth")

// A FetchError reports a sitemap that could not be fetched or read, or was
// read only in part (the entries before the error were used).
type FetchError struct {
	URL        string // the sitemap URL
	StatusCode int    // the HTTP status of a response that was not 2xx; else 0
	Err        error  // the cause: a network or read error, a *SyntaxError, ErrTooLarge, ErrNotSitemap, ErrTooDeep, or a robots.txt error
}

// Error implements error.
func (e *FetchError) Error() string {
	var b strings.Builder
	b.WriteString("sitemap: ")
	b.WriteString(e.URL)
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, ": status %d", e.StatusCode)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(strings.TrimPrefix(e.Err.Error(), "sitemap: "))
	}
	return b.String()
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *FetchError) Unwrap() error { return e.Err }

// maxWalkErrors is the number of FetchErrors a WalkError keeps; Failed
// counts them all.
const maxWalkErrors = 32

// A WalkError is returned by [Walker.Walk] when some sitemaps failed; the
// walk went on with the others, and every entry read was used. It unwraps
// to its FetchErrors, so errors.Is(err, ErrTooLarge) and errors.As with a
// *FetchError look through them.
type WalkError struct {
	Site   string        // the site walked
	Failed int           // sitemaps that failed
	Errs   []*FetchError // the first of them, at most 32
}

// Error implements error.
func (e *WalkError) Error() string {
	if len(e.Errs) == 0 {
		return fmt.Sprintf("sitemap: %s: %d files failed", e.Site, e.Failed)
	}
	more := ""
	if e.Failed > 1 {
		more = fmt.Sprintf(" (and %d more)", e.Failed-1)
	}
	return fmt.Sprintf("sitemap: %s: %d files failed: %v%s", e.Site, e.Failed, strings.TrimPrefix(e.Errs[0].Error(), "sitemap: "), more)
}

// Unwrap returns the underlying errors, for errors.Is and errors.As.
func (e *WalkError) Unwrap() []error {
	out := make([]error, len(e.Errs))
	for i, fe := range e.Errs {
		out[i] = fe
	}
	return out
}
