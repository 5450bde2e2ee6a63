package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/robotsmw/robotsmw/policy"
)

// maxRead bounds what is read of standard input or a fetched robots.txt:
// past policy.MaxSize, so that lint can report the excess.
const maxRead = 4 * policy.MaxSize

// maxRedirects is how many redirects a robots.txt fetch follows
// (RFC 9309 §2.3.1.2; the policy package's Cache follows as many).
const maxRedirects = 5

// stdinName is how standard input is named in messages.
const stdinName = "<stdin>"

// isLocal reports whether a ROBOTS argument names standard input or a
// file rather than a URL.
func isLocal(arg string) bool {
	return !hasScheme(arg, "http") && !hasScheme(arg, "https")
}

func hasScheme(arg, scheme string) bool {
	return len(arg) >= len(scheme)+3 && strings.EqualFold(arg[:len(scheme)+3], scheme+"://")
}

// isFile reports whether arg is "-" or an existing regular file.
func isFile(arg string) bool {
	if arg == "-" {
		return true
	}
	info, err := os.Stat(arg)
	return err == nil && info.Mode().IsRegular()
}

// readLocal reads a robots.txt file, or standard input for "-"; it also
// returns the name to show for it.
func (e *env) readLocal(arg string) ([]byte, string, error) {
	if arg == "-" {
		b, err := io.ReadAll(io.LimitReader(e.stdin, maxRead))
		if err != nil {
			return nil, stdinName, fmt.Errorf("reading standard input: %w", err)
		}
		return b, stdinName, nil
	}
	b, err := os.ReadFile(arg)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if hint := didYouMean(arg); hint != "" {
				return nil, arg, fmt.Errorf("%w (did you mean %q?)", err, hint)
			}
		}
		return nil, arg, err
	}
	return b, arg, nil
}

// didYouMean returns an https URL for an argument that looks like a host
// name or URL without its scheme ("example.com/robots.txt"), or "".
func didYouMean(arg string) string {
	if strings.HasPrefix(arg, "/") || strings.HasPrefix(arg, ".") || strings.Contains(arg, "://") {
		return ""
	}
	u, err := url.Parse("https://" + arg)
	if err != nil || !strings.Contains(u.Hostname(), ".") || strings.HasSuffix(u.Hostname(), ".txt") {
		return ""
	}
	return "https://" + arg
}

// siteURL parses a ROBOTS or SITE argument that is a URL.
func siteURL(arg string) (*url.URL, error) {
	u, err := url.Parse(arg)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, usagef("%q is not a valid URL: %v", arg, err)
	}
	if u.Hostname() == "" {
		return nil, usagef("%q has no host", arg)
	}
	return u, nil
}

// robotsURL returns the URL of the robots.txt of u's site.
func robotsURL(u *url.URL) *url.URL {
	return &url.URL{Scheme: strings.ToLower(u.Scheme), Host: u.Host, Path: "/robots.txt"}
}

// httpClient returns a copy of the run's client whose requests give up
// after timeout (0: the client's own Timeout is not set).
func (e *env) httpClient(timeout time.Duration) *http.Client {
	var c http.Client
	if e.client != nil {
		c = *e.client
	}
	c.Timeout = timeout
	if c.Transport == nil && e.guard != nil {
		c.Transport = e.guard.transport()
	}
	return &c
}

// fetchRaw fetches the robots.txt of site as it is served, past
// policy.MaxSize, following up to 5 redirects. It returns the body and
// the URL it came from.
func (e *env) fetchRaw(ctx context.Context, site *url.URL, agent string, timeout time.Duration) ([]byte, string, error) {
	target := robotsURL(site).String()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, target, err
	}
	req.Header.Set("User-Agent", agent)
	client := e.httpClient(timeout)
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > maxRedirects {
			return fmt.Errorf("more than %d redirects", maxRedirects)
		}
		return nil
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, target, fetchErr(ctx, target, err, timeout)
	}
	defer resp.Body.Close()
	final := resp.Request.URL.String()
	if resp.StatusCode/100 != 2 {
		return nil, final, fmt.Errorf("%s answered %s", final, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxRead))
	if err != nil {
		return nil, final, fetchErr(ctx, final, err, timeout)
	}
	return b, final, nil
}

// fetchErr describes a failed fetch of target: errInterrupted when the
// run's context ended, a timeout as one.
func fetchErr(ctx context.Context, target string, err error, timeout time.Duration) error {
	if errors.Is(context.Cause(ctx), context.Canceled) {
		return errInterrupted
	}
	return fmt.Errorf("%s: %s", target, describe(err, timeout))
}

// describe says why a fetch failed, without the layers of wrapping.
func describe(err error, timeout time.Duration) string {
	var nerr net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &nerr) && nerr.Timeout() {
		return fmt.Sprintf("no answer within %v (-timeout)", timeout)
	}
	var ferr *policy.FetchError
	if errors.As(err, &ferr) {
		switch {
		case ferr.StatusCode != 0:
			return "answered " + statusText(ferr.StatusCode)
		case ferr.Err != nil:
			err = ferr.Err
		}
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return err.Error()
}

func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return fmt.Sprintf("%d %s", code, t)
	}
	return fmt.Sprint(code)
}

// A robotsTxt is a robots.txt as a crawler obtained it.
type robotsTxt struct {
	name   string         // file name, <stdin>, or the robots.txt URL
	robots *policy.Robots // the rules in force
	body   []byte         // the parsed body, when there was one
	state  policy.State   // what the fetch found; StateParsed for a file
	status int            // the HTTP status, for a fetch
	err    error          // why robots.txt is unreachable; nil if it is not
	whyAll error          // for StateUnavailable: the fetch error, such as too many redirects
	local  bool           // read from a file or standard input, in full (up to maxRead)
}

// cut reports whether rt's body is larger than policy.MaxSize, so that
// its rules past it are not read: a file longer than it, or a fetched one
// that reached it (the cache reads no further).
func (rt *robotsTxt) cut() bool {
	if rt.local {
		return len(rt.body) > policy.MaxSize
	}
	return rt.err == nil && len(rt.body) >= policy.MaxSize
}

// cutText says that rt was cut, and where, as lint does.
func (rt *robotsTxt) cutText() string {
	kib := policy.MaxSize >> 10
	if !rt.local {
		return fmt.Sprintf("%s reached %d KiB, past which crawlers read nothing (RFC 9309 §2.5): rules after line %d (cut) are ignored; lint it for more",
			rt.name, kib, bytes.Count(rt.body, []byte("\n"))+1)
	}
	for _, d := range policy.Lint(rt.body) {
		if d.Code == "too-large" {
			return fmt.Sprintf("%s:%d: %s (RFC 9309 §2.5)", rt.name, d.Line, d.Message)
		}
	}
	return fmt.Sprintf("%s is %d bytes; only the first %d KiB are read (RFC 9309 §2.5)", rt.name, len(rt.body), kib)
}

// localRobots reads a ROBOTS file or standard input.
func (e *env) localRobots(arg string) (*robotsTxt, error) {
	body, name, err := e.readLocal(arg)
	if err != nil {
		return nil, err
	}
	return &robotsTxt{name: name, robots: policy.Parse(body), body: body, state: policy.StateParsed, local: true}, nil
}

// A fetcher gets robots.txt files through a policy.Cache, as a crawler
// does, and keeps their bodies.
type fetcher struct {
	cache *policy.Cache
	store *store
}

func (e *env) newFetcher(agent string, timeout time.Duration) *fetcher {
	s := &store{m: make(map[string]policy.Record)}
	return &fetcher{
		store: s,
		cache: &policy.Cache{Client: e.httpClient(timeout), UserAgent: agent, Timeout: timeout, Store: s},
	}
}

// get returns the robots.txt that applies to u. Only the end of ctx is an
// error: an unreachable robots.txt is a robotsTxt with err set.
func (f *fetcher) get(ctx context.Context, u *url.URL) (*robotsTxt, error) {
	entry, err := f.cache.Get(ctx, u)
	if err != nil && ctx.Err() != nil {
		return nil, errInterrupted
	}
	rt := &robotsTxt{
		name: entry.RobotsURL(), robots: entry.Robots, state: entry.State, status: entry.StatusCode, err: err,
		body: f.store.body(entry.Origin),
	}
	if rt.name == "" {
		rt.name = robotsURL(u).String()
	}
	if err == nil && entry.State == policy.StateUnavailable {
		rt.whyAll = entry.Err
	}
	return rt, nil
}

// A store is the fetcher's policy.Store: every record in memory, with its
// body, so that check can tell why a robots.txt has no rules. A run looks
// up few origins, so it is not bounded.
type store struct {
	mu sync.Mutex
	m  map[string]policy.Record // by origin
}

func (s *store) Load(_ context.Context, origin string) (policy.Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.m[origin]
	return r, ok, nil
}

func (s *store) Save(_ context.Context, origin string, r policy.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[origin] = r
	return nil
}

// body returns the body of origin's robots.txt, or nil.
func (s *store) body(origin string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[origin].Body
}

// seed makes the body of a file the robots.txt of the site of u, as if
// fetched from u, for as long as the run lasts.
func (s *store) seed(u *url.URL, body []byte) error {
	origin, err := policy.Origin(u)
	if err != nil {
		return err
	}
	rec := policy.Record{
		State: policy.StateParsed, GoodState: policy.StateParsed, StatusCode: http.StatusOK,
		Body: body, Robots: policy.Parse(body), Expires: time.Now().Add(100 * 365 * 24 * time.Hour),
	}
	if u.Path != "" && u.Path != "/" && u.Path != "/robots.txt" {
		rec.URL = u.String() // relative Sitemap lines resolve against it
	}
	return s.Save(context.Background(), origin, rec)
}

// noRules says why a robots.txt body holds no rules at all, when it is
// empty or not a robots.txt; "" otherwise.
func noRules(name string, body []byte) string {
	if body == nil {
		return ""
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return name + " is empty"
	}
	for _, d := range policy.Lint(body) {
		switch d.Code {
		case "html":
			return name + " is an html page, not a robots.txt"
		case "encoding":
			return name + " is not utf-8 text"
		}
	}
	return ""
}
