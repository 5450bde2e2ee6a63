package robotsmw

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"
)

// The Guard's own robots.txt fetches run inside the policy.Cache on a
// context that no caller can cancel (the fetch of an origin is shared by
// every request waiting for it, and bounded by the Cache's Timeout). The
// context keeps the values of the look-up that started the fetch, though,
// so the Guard passes the collector's context along as a value: the crawl
// the fetch belongs to. pacedTransport ends its wait for the host when that
// crawl ends, instead of waiting out a pause of up to maxRetryAfter for a
// robots.txt nobody will read.

// crawlKey is the context key under which the Guard passes the context of
// the crawl (the collector's Context) to its robots.txt fetches.
type crawlKey struct{}

// withCrawl returns ctx carrying the context of c's crawl, for the
// look-ups of the Guard's robots.txt cache. A crawl context that cannot end
// is not carried.
func withCrawl(ctx context.Context, c *colly.Collector) context.Context {
	crawl := collectorContext(c)
	if crawl.Done() == nil {
		return ctx
	}
	return context.WithValue(ctx, crawlKey{}, crawl)
}

// liveContext returns a context with the values of ctx that is cancelled
// when ctx is cancelled (with ctx's cause) or when the crawl carried in ctx
// ends (see withCrawl), but not when ctx's deadline passes. stop releases
// it and must be called once it is no longer used.
func liveContext(ctx context.Context) (live context.Context, stop context.CancelFunc) {
	live, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stopCtx := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.Canceled) {
			cancel(context.Cause(ctx))
		}
	})
	stopCrawl := func() bool { return true }
	if crawl, ok := ctx.Value(crawlKey{}).(context.Context); ok {
		stopCrawl = context.AfterFunc(crawl, func() { cancel(crawlEnded{context.Cause(crawl)}) })
	}
	return live, func() {
		stopCtx()
		stopCrawl()
		cancel(context.Canceled)
	}
}

// crawlEnded is the cause of a live context whose crawl ended: it matches
// context.Canceled, whatever ended the crawl (a deadline too), so that a
// robots.txt fetch it cuts is abandoned (see policy.Cache.Client), never
// counted as the site's failure nor as its host's timeout, and the other
// crawls waiting for that robots.txt fetch it again.
type crawlEnded struct{ cause error }

func (e crawlEnded) Error() string {
	return fmt.Sprintf("robotsmw: the crawl that asked for robots.txt ended (%v)", e.cause)
}

func (e crawlEnded) Is(target error) bool { return target == context.Canceled }

// A lazyLive is liveContext(parent), made when it is first used: a
// robots.txt hop that passes its gate at once never asks for it, and
// spares its contexts and their registration with parent (see
// pacedTransport.RoundTrip). Its parent must be set before its first use;
// it is then safe for concurrent use. release must be called once it is no
// longer used; a use after release makes a live context that ends only
// with parent.
type lazyLive struct {
	parent context.Context
	once   sync.Once
	made   atomic.Bool
	live   context.Context
	stop   context.CancelFunc
}

func (l *lazyLive) get() context.Context {
	l.once.Do(func() {
		l.live, l.stop = liveContext(l.parent)
		l.made.Store(true)
	})
	return l.live
}

// release stops the live context, if it was made.
func (l *lazyLive) release() {
	if l.made.Load() {
		l.stop()
	}
}

// Deadline implements context.Context: a live context has none.
func (l *lazyLive) Deadline() (time.Time, bool) { return time.Time{}, false }

// Done implements context.Context.
func (l *lazyLive) Done() <-chan struct{} { return l.get().Done() }

// Err implements context.Context.
func (l *lazyLive) Err() error { return l.get().Err() }

// Value implements context.Context.
func (l *lazyLive) Value(key any) any { return l.get().Value(key) }
