package robotsmw

import (
	"time"
)

// The end of a crawl's context (colly's Context, set by StdlibContext) is
// final and never the host's fault. A request that it cut, while sent or
// while its body was read, strikes no host, is not retried, and reaches
// OnError and a synchronous Visit with colly's own error (the context's
// error as net/http returns it: context.DeadlineExceeded or
// context.Canceled), as it would without the Guard; the Guard's
// ErrorHandler gets it wrapped in ErrGaveUp. The Guard does not end such a
// request early either: its early end (earlyTimeout) is for a client
// Timeout set after Attach, which net/http would otherwise turn into a
// string (see guardTransport.bound).

// crawlDeadline reports whether dl, the deadline of a request's context,
// is the deadline of the crawl of t: not the client's Timeout.
func (t *ticket) crawlDeadline(dl time.Time) bool {
	if t == nil || t.crawl == nil {
		return false
	}
	cd, ok := t.crawl.Deadline()
	return ok && !cd.After(dl)
}

// crawlOver reports whether the crawl of t has ended.
func (t *ticket) crawlOver() bool {
	return t != nil && t.crawl != nil && t.crawl.Err() != nil
}
