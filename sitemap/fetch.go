package sitemap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/robotsmw/robotsmw/policy"
)

// fetch fetches and reads the sitemap of j. It runs in a goroutine of its
// own, one per sitemap in flight.
func (wk *walk) fetch(j job) (res result) {
	res.job = j
	u, err := url.Parse(j.url)
	if err != nil {
		res.skipped.Invalid++
		return res
	}
	// No deadline for the file as a whole: each attempt has Timeout from
	// when it is sent (see sendDeadline), so waits for the host's pace and
	// a Retry-After do not count against it. robots.txt is bounded by
	// its Cache's Timeout.
	ctx := wk.ctx

	// A sitemap robots.txt disallows is not fetched (RFC 9309 §2.2.2).
	if ok, _, err := wk.allowed(ctx, u); err != nil {
		res.err = &FetchError{URL: j.url, Err: err}
		return res
	} else if !ok {
		res.skipped.Robots++
		return res
	}

	client := wk.hopClient()
	val, conditional := wk.w.validators().get(j.url)
	for attempt := 0; ; attempt++ {
		actx, deadline := withSendDeadline(ctx, wk.w.timeout())
		defer deadline.stop()
		req, err := http.NewRequestWithContext(actx, http.MethodGet, j.url, nil)
		if err != nil {
			res.skipped.Invalid++
			return res
		}
		if wk.w.UserAgent != "" {
			req.Header.Set("User-Agent", wk.w.UserAgent)
		}
		if conditional {
			val.apply(req)
		}
		resp, err := client.Do(req)
		deadline.start() // its body is read under it too
		err = deadline.err(err)
		if err == nil {
			deadline.reading()
		}
		switch {
		case errors.Is(err, errSeen):
			res.skipped.Duplicate++
			return res
		case errors.Is(err, errHopDisallowed):
			res.skipped.Robots++
			return res
		case err != nil:
			res.err = &FetchError{URL: j.url, Err: unwrapURLError(err)}
			return res
		}
		code := resp.StatusCode
		switch {
		case code == http.StatusNotModified && conditional:
			drain(resp)
			res.notModified = true
			return res
		case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
			d, ok := policy.RetryAfter(resp.Header, wk.w.clock())
			drain(resp)
			if !ok {
				d = 2 * time.Second << attempt
			}
			if attempt >= wk.w.retries() || d > maxRetryWait {
				var err error
				if attempt > 0 {
					err = fmt.Errorf("sitemap: gave up after %d attempts", attempt+1)
				}
				if d > maxRetryWait && attempt < wk.w.retries() {
					err = fmt.Errorf("sitemap: Retry-After %v is longer than %v", d, maxRetryWait)
				}
				res.err = &FetchError{URL: j.url, StatusCode: code, Err: err}
				return res
			}
			if err := wk.w.wait(ctx, d); err != nil {
				res.err = &FetchError{URL: j.url, StatusCode: code, Err: err}
				return res
			}
			continue
		case code < 200 || code > 299:
			drain(resp)
			if j.fallback && code >= 400 && code < 500 {
				return res // no /sitemap.xml: not an error
			}
			res.err = &FetchError{URL: j.url, StatusCode: code}
			return res
		}
		wk.read(&res, resp, deadline)
		if res.err != nil {
			res.err.Err = deadline.err(res.err.Err)
		}
		return res
	}
}

// read reads the body of a sitemap's 2xx response into res. Once the
// body was read to its end, deadline no longer counts.
func (wk *walk) read(res *result, resp *http.Response, deadline *sendDeadline) {
	body := newSpool(resp.Body, wk.w.maxSize(), deadline.stop)
	defer body.Close()
	j := res.job
	final := resp.Request.URL
	wk.markVisited(final.String())
	res.read = true
	sc := wk.scopeOf(j, final)
	rd := NewReader(body)
	rd.MaxSize, rd.MaxCompressedSize = wk.w.maxSize(), wk.w.maxSize()
	leaf := true
	defer func() {
		res.size = rd.Size()
		if res.read && (res.err == nil || !errors.Is(res.err.Err, ErrNotSitemap)) {
			// Entries without a usable URL, of a file that is a sitemap.
			drop(res, rd.index()).Invalid += rd.Skipped()
		}
	}()
	for {
		e, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, ErrNotSitemap) && j.fallback {
				res.read = false // /sitemap.xml is a page that says "not found"
				return
			}
			wk.w.validators().forget(j.url)
			res.err = &FetchError{URL: j.url, Err: err}
			return
		}
		ref, perr := url.Parse(e.Loc)
		if perr != nil || strings.ContainsRune(e.Loc, utf8.RuneError) {
			// U+FFFD: the Reader's stand-in for bytes that are not UTF-8,
			// a URL the site never wrote.
			drop(res, e.Index).Invalid++
			continue
		}
		u := final.ResolveReference(ref)
		if !normalize(u) {
			drop(res, e.Index).Invalid++
			continue
		}
		if wk.w.Filter != nil {
			var keep bool
			if e, u, keep = wk.filter(res, final, e, u); !keep {
				continue
			}
		}
		if e.Index {
			leaf = false
			if !sc.inChildScope(u) {
				res.skipped.Scope++
				continue
			}
			if !wk.follows(u) {
				res.skipped.Filter++
				continue
			}
			res.children = append(res.children, u.String())
			continue
		}
		wk.page(res, sc, u, e)
		if wk.w.Alternates {
			// Each alternate on its own merits, whether the page passed or not.
			wk.alternates(res, sc, final, u.String(), e)
		}
		if len(res.pages) >= streamBatch || res.weight >= streamWeight {
			wk.stream(res, body)
		}
	}
	res.index = !leaf
	if leaf {
		// Remembered once its pages are passed on (walk.take).
		res.validators = resp.Header
	} else {
		wk.w.validators().forget(j.url)
	}
}

// filter passes e, read at u, to Options.Filter, and returns the entry
// it kept and its URL, resolved against final; false, counted, when it
// dropped it or its new Loc is no URL to fetch.
func (wk *walk) filter(res *result, final *url.URL, e Entry, u *url.URL) (Entry, *url.URL, bool) {
	index := e.Index
	e.Loc, e.Tag, e.AlternateOf = u.String(), "", ""
	loc := e.Loc
	e, keep := wk.w.Filter(e)
	if !keep {
		drop(res, index).Filter++
		return e, nil, false
	}
	e.Index, e.Tag, e.AlternateOf = index, "", ""
	if e.Loc == loc {
		return e, u, true
	}
	ref, err := url.Parse(strings.TrimSpace(e.Loc))
	if err != nil {
		drop(res, index).Invalid++
		return e, nil, false
	}
	u = final.ResolveReference(ref)
	if !normalize(u) {
		drop(res, index).Invalid++
		return e, nil, false
	}
	return e, u, true
}

// page passes the page e, at u, on if it is in scope, kept by the
// filters and rules, and allowed by robots.txt, and counts it otherwise;
// it reports whether it was passed on.
func (wk *walk) page(res *result, sc *scope, u *url.URL, e Entry) bool {
	if !sc.inScope(res.job.chain, u) {
		res.dropped.Scope++
		return false
	}
	if !wk.keep(u, e) {
		res.dropped.Filter++
		return false
	}
	tag, ok := wk.route(u)
	if !ok {
		res.dropped.Filter++
		return false
	}
	if ok, r, err := wk.allowed(wk.ctx, u); err == nil && !ok {
		res.dropped.Robots++
		wk.logDisallowed(res.job.url, u, r)
		return false
	}
	e.Loc, e.Tag = u.String(), tag
	if res.pages == nil {
		res.pages = wk.pageBuffer()
	}
	res.pages = append(res.pages, e)
	res.weight += len(e.Loc) + len(e.Tag) + len(e.AlternateOf)
	for _, a := range e.Alternates {
		res.weight += len(a.Href) + len(a.Hreflang) + 32 // and its two string headers
	}
	res.kept++
	return true
}

// streamBatch is the number of pages of a sitemap passed on at a time
// while it is read; fewer when their strings weigh streamWeight bytes (a
// page may list a thousand hreflang alternates).
const (
	streamBatch  = 1000
	streamWeight = 1 << 20
)

// stream hands the pages of res read so far to the walk, which passes them
// on while the rest of the file is read. While the walk has Concurrency
// results or batches to take, it waits, after reading the rest of the
// file from body into memory (see spool).
func (wk *walk) stream(res *result, body *spool) {
	batch := result{job: res.job, partial: true, pages: res.pages}
	res.pages, res.weight = nil, 0
	select {
	case wk.results <- batch:
		return
	default:
	}
	body.take()
	wk.results <- batch
}

// alternates passes on the hreflang alternates of the page parent, at
// loc.
func (wk *walk) alternates(res *result, sc *scope, final *url.URL, loc string, parent Entry) {
	for _, a := range parent.Alternates {
		ref, err := url.Parse(a.Href)
		if err != nil || strings.ContainsRune(a.Href, utf8.RuneError) {
			res.dropped.Invalid++
			continue
		}
		u := final.ResolveReference(ref)
		if !normalize(u) {
			res.dropped.Invalid++
			continue
		}
		if u.String() == loc {
			continue // the page lists itself among its alternates
		}
		wk.page(res, sc, u, Entry{Loc: a.Href, LastMod: parent.LastMod, Priority: -1, AlternateOf: loc})
	}
}

// drop returns the counts an entry that is dropped goes to.
func drop(res *result, index bool) *Drops {
	if index {
		return &res.skipped
	}
	return &res.dropped
}

// keep applies the filters Since, Include and Exclude to a page.
func (wk *walk) keep(u *url.URL, e Entry) bool {
	o := &wk.w.Options
	if !o.Since.IsZero() && !e.LastMod.IsZero() && e.LastMod.Before(o.Since) {
		return false
	}
	if len(o.Include) == 0 && len(o.Exclude) == 0 {
		return true
	}
	target := u.RequestURI()
	if len(o.Include) > 0 && !matchAny(o.Include, target) {
		return false
	}
	return !matchAny(o.Exclude, target)
}

// robotsFor returns the walk's robots.txt entry for u's origin. A fetch
// its Client abandoned (another crawl sharing the cache ended, see
// policy.Cache.Client) is asked for again, a few times, while ctx lives:
// it is no answer of the site.
func (wk *walk) robotsFor(ctx context.Context, u *url.URL) (policy.Entry, error) {
	for tries := 1; ; tries++ {
		e, err := wk.robots.Get(ctx, u)
		if err == nil || !errors.Is(err, context.Canceled) || ctx.Err() != nil || tries > maxAbandoned {
			return e, err
		}
	}
}

// maxAbandoned is how often robotsFor asks again for a robots.txt whose
// fetch was abandoned.
const maxAbandoned = 3

// allowed reports whether robots.txt allows u for the walk's agent, and
// the robots.txt that decided (nil for /robots.txt itself). err is
// non-nil when robots.txt gives no verdict (unreachable, or ctx ended).
func (wk *walk) allowed(ctx context.Context, u *url.URL) (bool, *policy.Robots, error) {
	u = policy.ResolveDots(u) // the path as the server reads it
	if u.Path == "/robots.txt" {
		return true, nil, nil
	}
	e, err := wk.robotsFor(ctx, u)
	if err != nil {
		return false, nil, err
	}
	return e.Robots.Allowed(wk.agent, u), e.Robots, nil
}

// hopClient returns the walk's client with a CheckRedirect that ends a
// redirect to a sitemap fetched already in this walk or to a URL robots.txt
// disallows, and otherwise asks the client's own rule.
func (wk *walk) hopClient() *http.Client {
	base := wk.w.client()
	c := *wk.w.paced(base)
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		// The hop's own send starts Timeout anew: its wait for its host
		// does not count (see sendDeadline).
		sendDeadlineOf(req.Context()).pause()
		// A hop to another spelling of the URL it leaves (/%7Esm.xml to
		// /~sm.xml) is the same sitemap, marked already; the redirect
		// bound below ends a loop.
		u := req.URL.String()
		if canonical(u) != canonical(via[len(via)-1].URL.String()) && !wk.markVisited(u) {
			return errSeen
		}
		if ok, _, err := wk.allowed(req.Context(), req.URL); err == nil && !ok {
			return errHopDisallowed
		}
		if base.CheckRedirect != nil {
			return base.CheckRedirect(req, via)
		}
		if len(via) >= 10 {
			return errors.New("sitemap: stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

// normalize makes u a URL to fetch or seed: http or https with a host,
// scheme and host written as their origin (policy.Origin: lower case, no
// trailing dot, IDN in punycode, no default port), no fragment; so that
// "HTTP://S.test.:80/p" and "http://s.test/p" are one page. It reports
// false for anything else (docs/sitemaps.md, case 96).
func normalize(u *url.URL) bool {
	if u.Host == "" || u.Opaque != "" {
		return false
	}
	o, err := policy.Origin(u)
	if err != nil {
		return false
	}
	scheme, host, _ := strings.Cut(o, "://")
	if h, err := url.PathUnescape(host); err == nil {
		host = h // an IPv6 zone is escaped in an origin ("%25"), not in URL.Host
	}
	u.Scheme, u.Host = scheme, host
	u.Fragment, u.RawFragment = "", ""
	return true
}

// canonical returns the URL s normalized (see normalize) with its
// percent-encodings normalized (policy.NormalizeEscapes), or s itself if it is no
// http or https URL: the key the walk knows a sitemap by.
func canonical(s string) string {
	u, err := url.Parse(s)
	if err != nil || !normalize(u) {
		return s
	}
	if c := u.String(); c != s {
		return policy.NormalizeEscapes(c)
	}
	return policy.NormalizeEscapes(s) // the caller's string, not a copy that a set would keep
}

func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// drain reads a little of a body so that its connection can be reused,
// and closes it.
func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
}

// unwrapURLError returns the cause of a *url.Error: the URL is in the
// FetchError already.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
