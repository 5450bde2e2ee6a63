package robotsmw

import (
	"errors"

	"github.com/gocolly/colly/v2"
)

// A request the Guard deferred reached OnError with a *DeferredError, and
// the Guard sends it again with Request.Retry. colly may refuse that
// re-send before anything is sent (MaxRequests reached, a URL filter or
// AllowedDomains refusing a redirect hop it resumes at, MaxDepth, a body
// that cannot be read again) and then calls no callback; nor is anything
// sent once the collector's context has ended. The request's final
// outcome, an error wrapping ErrGaveUp and colly's reason, then reaches
// the collector's OnError callbacks from the Guard (before colly's Wait
// returns: the deferred request holds Wait until then), as well as
// ErrorHandler and Stats: a user filtering OnError with IsFinal learns of
// every page lost.

// refused reports the final outcome err of r, a deferred request that
// could not be sent again, to ErrorHandler, Stats and c's OnError
// callbacks.
func (g *Guard) refused(c *colly.Collector, r *colly.Request, err error) {
	g.report(r, err)
	final := &refusedError{err: err}
	resp := &colly.Response{Request: r, Ctx: r.Ctx}
	for _, f := range collyErrorCallbacks(c) {
		f(resp, final)
	}
}

// A refusedError is the final outcome of a deferred request that colly
// refused to send again, as OnError gets it from the Guard. The Guard's
// own OnError callback ignores it.
type refusedError struct{ err error }

func (e *refusedError) Error() string { return e.err.Error() }
func (e *refusedError) Unwrap() error { return e.err }

// isRefused reports whether err is a refusedError.
func isRefused(err error) bool {
	var re *refusedError
	return errors.As(err, &re)
}
