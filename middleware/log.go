package robotsmw

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/robotsmw/robotsmw/policy"
)

// The Guard's log: the events Guard.Logger lists, one function each, so
// that each outcome point adds one call. Nothing is built for a record
// nobody reads: each event first asks the Logger whether its level is
// enabled, so a nil Logger, or one whose level is above the event's,
// costs a nil check or a level check and allocates nothing (BenchmarkHooks
// and BenchmarkLogOff).

// logger returns the Guard's Logger if it is set and enabled at level.
func (g *Guard) logger(level slog.Level) *slog.Logger {
	if l := g.Logger; l != nil && l.Enabled(context.Background(), level) {
		return l
	}
	return nil
}

// logBlocked logs a request or hop to u that robots.txt disallows for agent.
func (g *Guard) logBlocked(h *host, u *url.URL, agent string, d policy.Decision) {
	l := g.logger(slog.LevelInfo)
	if l == nil {
		return
	}
	attrs := []slog.Attr{
		slog.String("host", h.name), slog.String("url", u.Redacted()),
		slog.String("agent", agent), slog.String("group", d.Agent),
	}
	if d.Rule != nil {
		attrs = append(attrs, slog.String("rule", d.Rule.String()), slog.Int("line", d.Rule.Line))
	}
	l.LogAttrs(context.Background(), slog.LevelInfo, "request blocked", attrs...)
}

// logCrawlDelay logs a request to u not sent because origin's Crawl-delay d
// is longer than policy.MaxCrawlDelay.
func (g *Guard) logCrawlDelay(h *host, u *url.URL, origin string, d time.Duration) {
	if l := g.logger(slog.LevelInfo); l != nil {
		l.LogAttrs(context.Background(), slog.LevelInfo, "request blocked",
			slog.String("host", h.name), slog.String("url", u.Redacted()),
			slog.String("origin", origin), slog.Duration("crawl_delay", d))
	}
}

// logDeferred logs a deferral of r: a wait (Debug) or a failed attempt
// that is sent again (Info).
func (g *Guard) logDeferred(r *colly.Request, de *DeferredError) {
	level, msg := slog.LevelDebug, "request deferred"
	if de.Attempt > 0 {
		level, msg = slog.LevelInfo, "request retried"
	}
	l := g.logger(level)
	if l == nil {
		return
	}
	attrs := []slog.Attr{
		slog.String("host", hostKey(r.URL)), slog.String("url", r.URL.Redacted()),
		slog.Time("until", de.Until),
	}
	if de.Attempt > 0 {
		attrs = append(attrs, slog.Int("attempt", de.Attempt))
	}
	attrs = append(attrs, slog.String("cause", de.Err.Error()))
	l.LogAttrs(context.Background(), level, msg, attrs...)
}

// logPaused logs a pause of h that a failure started or lengthened: the
// response's status (0 for a network error err) to a request for u (nil
// if unknown), the pause and its end, and the Retry-After if one was sent.
func (g *Guard) logPaused(h *host, u *url.URL, status int, err error, pause time.Duration, until time.Time, ra time.Duration, raOK bool) {
	l := g.logger(slog.LevelWarn)
	if l == nil {
		return
	}
	attrs := make([]slog.Attr, 0, 6)
	attrs = append(attrs, slog.String("host", h.name))
	if u != nil {
		attrs = append(attrs, slog.String("url", u.Redacted()))
	}
	switch {
	case status != 0:
		attrs = append(attrs, slog.Int("status", status))
	case err != nil:
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	attrs = append(attrs, slog.Time("until", until), slog.Duration("pause", pause))
	if raOK {
		attrs = append(attrs, slog.Duration("retry_after", ra))
	}
	l.LogAttrs(context.Background(), slog.LevelWarn, "host paused", attrs...)
}

// logGaveUp logs a final failure of r. The error net/http wraps around
// the transport's (*url.Error: method and URL) is dropped: the record has
// the URL.
func (g *Guard) logGaveUp(r *colly.Request, err error) {
	if l := g.logger(slog.LevelWarn); l != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		l.LogAttrs(context.Background(), slog.LevelWarn, "request gave up",
			slog.String("host", hostKey(r.URL)), slog.String("url", r.URL.Redacted()),
			slog.String("error", err.Error()))
	}
}

// logNotFollowed logs a link of page that FollowLinks did not visit.
func (g *Guard) logNotFollowed(u, page *url.URL, reason string) {
	if l := g.logger(slog.LevelDebug); l != nil {
		l.LogAttrs(context.Background(), slog.LevelDebug, "link not followed",
			slog.String("url", u.Redacted()), slog.String("page", page.Redacted()),
			slog.String("reason", reason))
	}
}

// finalFailure reports whether err, a final outcome, is a failure rather
// than a verdict of robots.txt.
func finalFailure(err error) bool {
	return !errors.Is(err, ErrDisallowed) && !errors.Is(err, ErrCrawlDelayTooLong) && !errors.Is(err, ErrDuplicate)
}
