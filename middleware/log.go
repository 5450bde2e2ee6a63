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

// ms rounds d to milliseconds, for people: "12.098s", not "12.098004739s".
func ms(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// at rounds t to milliseconds, for people.
func at(t time.Time) time.Time { return t.Round(time.Millisecond) }

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
	if r := d.Rule; r != nil {
		rule := "disallow: " + r.Pattern
		if r.Allow {
			rule = "allow: " + r.Pattern
		}
		attrs = append(attrs, slog.Int("line", r.Line), slog.String("rule", rule))
	}
	l.LogAttrs(context.Background(), slog.LevelInfo, "request blocked", attrs...)
}

// logCrawlDelay logs a request to u not sent because origin's Crawl-delay d
// is longer than policy.MaxCrawlDelay.
func (g *Guard) logCrawlDelay(h *host, u *url.URL, origin string, d time.Duration) {
	if l := g.logger(slog.LevelInfo); l != nil {
		l.LogAttrs(context.Background(), slog.LevelInfo, "request blocked",
			slog.String("host", h.name), slog.String("url", u.Redacted()),
			slog.String("origin", origin), slog.Duration("crawl_delay", ms(d)))
	}
}

// logDeferred logs a deferral of r: a wait (Debug) or a failed attempt
// that is sent again (Info). next_attempt is the earliest the request is
// sent again under its host's rules; a retried attempt's line also tells
// the pause the failure started, if it did (one event, one line: no
// "host paused" line of its own).
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
	}
	if de.Attempt > 0 {
		attrs = append(attrs, slog.Int("attempt", de.Attempt))
	}
	attrs = append(attrs, slog.String("cause", de.Err.Error()), slog.Time("next_attempt", at(de.Until)))
	if ev := de.pause; ev.longer {
		attrs = append(attrs, slog.Duration("host_pause", ms(ev.pause)))
		if ev.raOK {
			attrs = append(attrs, slog.Duration("retry_after", ms(ev.ra)))
		}
	}
	l.LogAttrs(context.Background(), level, msg, attrs...)
}

// logPaused logs a pause of a host that a failure started or lengthened
// (ev): the response's status, or the network error, of the request that
// failed, the pause and its end, and the Retry-After if one was sent.
func (g *Guard) logPaused(ev pauseEvent) {
	l := g.logger(slog.LevelWarn)
	if l == nil {
		return
	}
	attrs := make([]slog.Attr, 0, 6)
	attrs = append(attrs, slog.String("host", ev.h.name))
	if ev.u != nil {
		attrs = append(attrs, slog.String("url", ev.u.Redacted()))
	}
	switch {
	case ev.status != 0:
		attrs = append(attrs, slog.Int("status", ev.status))
	case ev.err != nil:
		attrs = append(attrs, slog.String("error", ev.err.Error()))
	}
	attrs = append(attrs, slog.Duration("pause", ms(ev.pause)), slog.Time("paused_until", at(ev.until)))
	if ev.raOK {
		attrs = append(attrs, slog.Duration("retry_after", ms(ev.ra)))
	}
	l.LogAttrs(context.Background(), slog.LevelWarn, "host paused", attrs...)
}

// logGaveUp logs a final failure of a request to u. The error net/http
// wraps around the transport's (*url.Error: method and URL) is dropped:
// the record has the URL.
func (g *Guard) logGaveUp(u *url.URL, err error) {
	if l := g.logger(slog.LevelWarn); l != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		l.LogAttrs(context.Background(), slog.LevelWarn, "request gave up",
			slog.String("host", hostKey(u)), slog.String("url", u.Redacted()),
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
