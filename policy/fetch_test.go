package policy

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestFetchStatus: one row per status of RFC 9309 §2.3.1 and
// docs/robots-semantics.md#status-codes.
func TestFetchStatus(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		state     State
		private   bool // /private allowed
		public    bool // /public allowed
		wantError bool // Get returns a *FetchError
	}{
		// RFC 9309 §2.3.1.1: 2xx is parsed.
		{"200", 200, testRules, StateParsed, false, true, false},
		{"204", 204, "", StateParsed, true, true, false},
		{"200 HTML", 200, "<!DOCTYPE html><html><body>Disallow: /private</body></html>", StateParsed, true, true, false},
		// RFC 9309 §2.3.1.3: 4xx other than 429 allows all.
		{"400", 400, testRules, StateUnavailable, true, true, false},
		{"401", 401, testRules, StateUnavailable, true, true, false},
		{"403", 403, testRules, StateUnavailable, true, true, false},
		{"404", 404, testRules, StateUnavailable, true, true, false},
		{"410", 410, testRules, StateUnavailable, true, true, false},
		// docs/robots-semantics.md#status-codes: 429 is a server error;
		// RFC 9309 §2.3.1.4: 5xx disallows all.
		{"429", 429, testRules, StateUnreachable, false, false, true},
		{"500", 500, testRules, StateUnreachable, false, false, true},
		{"502", 502, testRules, StateUnreachable, false, false, true},
		{"503", 503, testRules, StateUnreachable, false, false, true},
		// A redirect status that cannot be followed is treated as 404.
		{"304", 304, "", StateUnavailable, true, true, false},
		{"302 without Location", 302, "", StateUnavailable, true, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, n := robotsServer(t, serve(tt.status, tt.body))
			clock := newFakeClock()
			c := newCache(t, clock)
			e, err := c.Get(context.Background(), urlOf(t, srv.URL+"/page"))
			var fe *FetchError
			if got := errors.As(err, &fe); got != tt.wantError {
				t.Fatalf("Get = %v, want a *FetchError: %v", err, tt.wantError)
			}
			if fe != nil && (fe.StatusCode != tt.status || fe.URL != srv.URL+"/robots.txt") {
				t.Errorf("FetchError = {%q, %d}, want {%q, %d}", fe.URL, fe.StatusCode, srv.URL+"/robots.txt", tt.status)
			}
			if e.State != tt.state || e.StatusCode != tt.status {
				t.Errorf("Get: state %v, status %d; want %v, %d", e.State, e.StatusCode, tt.state, tt.status)
			}
			if wantFailures := map[bool]int{true: 1}[tt.wantError]; e.Failures != wantFailures {
				t.Errorf("Get: Entry.Failures = %d, want %d", e.Failures, wantFailures)
			}
			if got := allowed(t, e, "/private"); got != tt.private {
				t.Errorf("Allowed(TestBot, /private) = %v, want %v", got, tt.private)
			}
			if got := allowed(t, e, "/public"); got != tt.public {
				t.Errorf("Allowed(TestBot, /public) = %v, want %v", got, tt.public)
			}
			if !allowed(t, e, "/robots.txt") {
				t.Errorf("Allowed(TestBot, /robots.txt) = false, want true")
			}
			if !e.FetchedAt.Equal(clock.Now()) || e.Origin != srv.URL {
				t.Errorf("Get: FetchedAt %v, Origin %q; want %v, %q", e.FetchedAt, e.Origin, clock.Now(), srv.URL)
			}
			if tt.wantError {
				if !e.RetryAt.Equal(clock.Now().Add(time.Minute)) || !e.Expires.Equal(e.RetryAt) {
					t.Errorf("Get: RetryAt %v, Expires %v; want now+1m for both", e.RetryAt, e.Expires)
				}
			} else if !e.Expires.Equal(clock.Now().Add(24*time.Hour)) || !e.RetryAt.IsZero() {
				t.Errorf("Get: Expires %v, RetryAt %v; want now+24h, zero", e.Expires, e.RetryAt)
			}
			// Until RetryAt or Expires, the entry is served from the cache.
			clock.Advance(59 * time.Second)
			if e2, err2 := c.Get(context.Background(), urlOf(t, srv.URL+"/other")); e2.State != e.State || (err2 != nil) != tt.wantError {
				t.Errorf("second Get = %v, state %v; want the cached entry", err2, e2.State)
			}
			if n.Load() != 1 {
				t.Errorf("robots.txt fetches = %d, want 1", n.Load())
			}
		})
	}
}

// TestFetchRetrySchedule: RFC 9309 §2.3.1.4, Google: an unreachable
// robots.txt is retried, without a Retry-After after 1 min doubling to
// 1 h; Entry.Failures counts the failures in a row.
func TestFetchRetrySchedule(t *testing.T) {
	for _, status := range []int{429, 500, 503} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			srv, n := robotsServer(t, serve(status, ""))
			clock := newFakeClock()
			c := newCache(t, clock)
			u := urlOf(t, srv.URL+"/")
			want := []time.Duration{1, 2, 4, 8, 16, 32, 60, 60}
			for i, w := range want {
				e, err := c.Get(context.Background(), u)
				var fe *FetchError
				if !errors.As(err, &fe) || fe.StatusCode != status || allowed(t, e, "/public") {
					t.Fatalf("fetch %d: Get = %v, /public allowed %v; want a %d *FetchError, false", i+1, err, allowed(t, e, "/public"), status)
				}
				if got := e.RetryAt.Sub(clock.Now()); got != w*time.Minute {
					t.Errorf("fetch %d: RetryAt - now = %v, want %v", i+1, got, w*time.Minute)
				}
				if e.Failures != i+1 {
					t.Errorf("fetch %d: Entry.Failures = %d, want %d", i+1, e.Failures, i+1)
				}
				if got := n.Load(); got != int64(i+1) {
					t.Fatalf("fetch %d: robots.txt fetches = %d", i+1, got)
				}
				clock.Set(e.RetryAt)
			}
		})
	}
	t.Run("configured", func(t *testing.T) {
		srv, _ := robotsServer(t, serve(503, ""))
		clock := newFakeClock()
		c := newCache(t, clock)
		c.RetryMin, c.RetryMax = time.Second, 3*time.Second
		u := urlOf(t, srv.URL+"/")
		for i, w := range []time.Duration{1, 2, 3, 3} {
			e, _ := c.Get(context.Background(), u)
			if got := e.RetryAt.Sub(clock.Now()); got != w*time.Second {
				t.Errorf("fetch %d: RetryAt - now = %v, want %v", i+1, got, w*time.Second)
			}
			clock.Set(e.RetryAt)
		}
	})
	t.Run("huge RetryMax", func(t *testing.T) {
		// Doubling reaches RetryMax without overflowing on the way.
		srv, _ := robotsServer(t, serve(503, ""))
		clock := newFakeClock()
		c := newCache(t, clock)
		c.RetryMin, c.RetryMax = time.Hour, maxDuration
		u := urlOf(t, srv.URL+"/")
		want := time.Hour
		for i := range 25 {
			c.Get(context.Background(), u)
			c.running.Wait() // after 30 days Get refreshes in the background
			e, _ := c.Peek(u)
			if got := e.RetryAt.Sub(clock.Now()); got != want {
				t.Fatalf("fetch %d: RetryAt - now = %v, want %v", i+1, got, want)
			}
			want = maxDuration
			if i < 21 { // 1h·2^22 is past maxDuration
				want = time.Hour << (i + 1)
			}
			clock.Set(e.RetryAt)
		}
	})
}

// TestFetchRetryAfter: RFC 9110 §10.2.3: a Retry-After sent with a 429 or
// 503 robots.txt sets RetryAt exactly as sent (see RetryAfter), below
// RetryMin and beyond 24 h too, with a date measured against the
// response's Date; without a valid one the doubling schedule applies.
func TestFetchRetryAfter(t *testing.T) {
	clock := newFakeClock()
	now := clock.Now()
	date := func(d time.Duration) string { return now.Add(d).Format(http.TimeFormat) }
	tests := []struct {
		name, header string
		date         string // the response's Date; "-" for none
		want         time.Duration
	}{
		{"seconds", "120", date(0), 2 * time.Minute},
		{"one second", "1", date(0), time.Second},
		{"below RetryMin", "5", date(0), 5 * time.Second},
		{"date", date(3 * time.Hour), date(0), 3 * time.Hour},
		{"date, server clock behind", date(-time.Hour + 2*time.Minute), date(-time.Hour), 2 * time.Minute},
		{"date, no Date", date(3 * time.Hour), "-", 3 * time.Hour},
		{"above 24h", "999999", date(0), 999999 * time.Second},
		{"overflow", "99999999999999999999", date(0), retryAfterLimit},
		// No wait asked for: the doubling schedule.
		{"zero", "0", date(0), time.Minute},
		{"past date", date(-time.Hour), date(0), time.Minute},
		{"negative", "-5", date(0), time.Minute},
		{"invalid", "soon", date(0), time.Minute},
	}
	for _, status := range []int{429, 503} {
		for _, tt := range tests {
			t.Run(fmt.Sprint(status, " ", tt.name), func(t *testing.T) {
				srv, _ := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Retry-After", tt.header)
					w.Header()["Date"] = []string{tt.date}
					if tt.date == "-" {
						w.Header()["Date"] = nil // net/http then sends none
					}
					w.WriteHeader(status)
				})
				c := newCache(t, clock)
				e, err := c.Get(context.Background(), urlOf(t, srv.URL+"/"))
				if err == nil || e.State != StateUnreachable {
					t.Fatalf("Get = %v, state %v; want an error, unreachable", err, e.State)
				}
				if got := e.RetryAt.Sub(clock.Now()); got != tt.want || !e.Expires.Equal(e.RetryAt) {
					t.Errorf("Retry-After %q, Date %q: RetryAt - now = %v, Expires %v; want %v, RetryAt",
						tt.header, tt.date, got, e.Expires, tt.want)
				}
			})
		}
	}
}

// TestFetchRetryAfterHonoured: a robots.txt 503 with Retry-After: 1 is
// fetched again one second later, not after RetryMin; a later failure
// without Retry-After goes on with the doubling schedule.
func TestFetchRetryAfterHonoured(t *testing.T) {
	var calls atomic.Int64
	srv, n := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
		}
		w.WriteHeader(503)
	})
	clock := newFakeClock()
	c := newCache(t, clock)
	u := urlOf(t, srv.URL+"/")
	e, _ := c.Get(context.Background(), u)
	if got := e.RetryAt.Sub(e.FetchedAt); got != time.Second || e.Failures != 1 {
		t.Fatalf("after 503 with Retry-After: 1: RetryAt - FetchedAt = %v, Failures %d; want 1s, 1", got, e.Failures)
	}
	clock.Advance(time.Second - time.Millisecond)
	c.Get(context.Background(), u)
	if got := n.Load(); got != 1 {
		t.Errorf("robots.txt fetches before the Retry-After ends = %d, want 1", got)
	}
	clock.Advance(time.Millisecond)
	e, _ = c.Get(context.Background(), u)
	if got := n.Load(); got != 2 {
		t.Errorf("robots.txt fetches when the Retry-After ends = %d, want 2", got)
	}
	if got := e.RetryAt.Sub(e.FetchedAt); got != 2*time.Minute || e.Failures != 2 {
		t.Errorf("second 503, no Retry-After: RetryAt - FetchedAt = %v, Failures %d; want 2m, 2", got, e.Failures)
	}
}

// TestFetchRedirectAcrossHosts: RFC 9309 §2.3.1.2: redirects are followed
// across authorities, and the rules apply to the origin that was asked.
func TestFetchRedirectAcrossHosts(t *testing.T) {
	target, nTarget := robotsServer(t, serve(200, testRules))
	srv, n := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/robots.txt", http.StatusMovedPermanently)
	})
	c := newCache(t, newFakeClock())
	e, err := c.Get(context.Background(), urlOf(t, srv.URL+"/x"))
	if err != nil || e.State != StateParsed || e.StatusCode != 200 || allowed(t, e, "/private") {
		t.Fatalf("Get = %v, state %v, status %d, /private allowed %v; want nil, parsed, 200, false",
			err, e.State, e.StatusCode, allowed(t, e, "/private"))
	}
	if e.Origin != srv.URL {
		t.Errorf("Entry.Origin = %q, want %q", e.Origin, srv.URL)
	}
	if want := target.URL + "/robots.txt"; e.URL != want || e.RobotsURL() != want {
		t.Errorf("Entry.URL, RobotsURL() = %q, %q, want %q (where robots.txt redirected to)", e.URL, e.RobotsURL(), want)
	}
	if _, ok := c.Peek(urlOf(t, target.URL+"/")); ok {
		t.Errorf("Peek(redirect target) ok = true, want false")
	}
	if n.Load() != 1 || nTarget.Load() != 1 {
		t.Errorf("fetches = %d and %d, want 1 and 1", n.Load(), nTarget.Load())
	}
}

// TestFetchRedirectHops: RFC 9309 §2.3.1.2, Google: 5 hops are followed;
// more, or a loop, is treated as 404.
func TestFetchRedirectHops(t *testing.T) {
	hopServer := func(t *testing.T, hops int) string {
		srv, _ := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
			i := 0
			if r.URL.Path != "/robots.txt" {
				fmt.Sscanf(r.URL.Path, "/hop%d", &i)
			}
			if i < hops {
				http.Redirect(w, r, fmt.Sprintf("/hop%d", i+1), http.StatusFound)
				return
			}
			fmt.Fprint(w, testRules)
		})
		return srv.URL
	}
	loop, _ := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.Redirect(w, r, "/elsewhere", http.StatusMovedPermanently)
			return
		}
		http.Redirect(w, r, "/robots.txt", http.StatusTemporaryRedirect)
	})
	tests := []struct {
		name    string
		base    string
		state   State
		private bool
	}{
		{"1 hop", hopServer(t, 1), StateParsed, false},
		{"5 hops", hopServer(t, 5), StateParsed, false},
		{"6 hops", hopServer(t, 6), StateUnavailable, true},
		{"loop", loop.URL, StateUnavailable, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCache(t, newFakeClock())
			e, err := c.Get(context.Background(), urlOf(t, tt.base+"/"))
			if err != nil || e.State != tt.state || allowed(t, e, "/private") != tt.private {
				t.Errorf("Get = %v, state %v, /private allowed %v; want nil, %v, %v",
					err, e.State, allowed(t, e, "/private"), tt.state, tt.private)
			}
			if tt.state == StateUnavailable && !errors.Is(e.Err, ErrTooManyRedirects) {
				t.Errorf("Entry.Err = %v, want ErrTooManyRedirects", e.Err)
			}
		})
	}
}

// TestFetchNetworkErrors: RFC 9309 §2.3.1.4, Google: network errors,
// timeouts and bodies cut short make robots.txt unreachable.
func TestFetchNetworkErrors(t *testing.T) {
	refused, _ := robotsServer(t, serve(200, testRules))
	refused.Close()

	silent, _ := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers
	})

	cut, _ := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n%s", testRules)
		buf.Flush()
	})

	chunked, _ := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\nzz\r\n", len(testRules), testRules)
		buf.Flush()
	})

	badGzip, _ := robotsServer(t, serve(200, "not gzip", "Content-Encoding", "gzip"))

	tests := []struct {
		name   string
		base   string
		status int
		check  func(error) bool
	}{
		{"connection refused", refused.URL, 0, func(err error) bool {
			var op *net.OpError
			return errors.As(err, &op)
		}},
		{"timeout", silent.URL, 0, func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }},
		{"body cut", cut.URL, 200, func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }},
		{"chunking error", chunked.URL, 200, func(err error) bool { return err != nil }},
		{"bad gzip", badGzip.URL, 200, func(err error) bool { return err != nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			c := newCache(t, clock)
			c.Timeout = 100 * time.Millisecond
			e, err := c.Get(context.Background(), urlOf(t, tt.base+"/"))
			var fe *FetchError
			if !errors.As(err, &fe) || fe.StatusCode != tt.status || !tt.check(fe.Err) {
				t.Fatalf("Get = %v, want a *FetchError with status %d and the right cause", err, tt.status)
			}
			if e.State != StateUnreachable || allowed(t, e, "/public") || e.Err != err {
				t.Errorf("Get: state %v, /public allowed %v, Err %v; want unreachable, false, %v",
					e.State, allowed(t, e, "/public"), e.Err, err)
			}
			if !e.RetryAt.Equal(clock.Now().Add(time.Minute)) {
				t.Errorf("Get: RetryAt %v, want now+1m", e.RetryAt)
			}
		})
	}
}

// countingTransport counts the body bytes the client reads.
type countingTransport struct {
	base http.RoundTripper
	read atomic.Int64
}

func (t *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if resp != nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &t.read}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// TestFetchSizeLimit: RFC 9309 §2.5: only the first 500 KiB are read; a
// rule after them is ignored.
func TestFetchSizeLimit(t *testing.T) {
	var body strings.Builder
	body.WriteString("User-agent: *\nDisallow: /first\n")
	line := "# " + strings.Repeat("x", 1021) + "\n"
	for body.Len() < 900<<10 {
		body.WriteString(line)
	}
	body.WriteString("Disallow: /last\n")
	srv, _ := robotsServer(t, serve(200, body.String()))
	tr := &countingTransport{base: &http.Transport{}}
	t.Cleanup(tr.base.(*http.Transport).CloseIdleConnections)
	c := newCache(t, newFakeClock())
	c.Client = &http.Client{Transport: tr}
	e, err := c.Get(context.Background(), urlOf(t, srv.URL+"/"))
	if err != nil || e.State != StateParsed {
		t.Fatalf("Get = %v, state %v; want nil, parsed", err, e.State)
	}
	if allowed(t, e, "/first") || !allowed(t, e, "/last") {
		t.Errorf("Allowed /first %v, /last %v; want false, true", allowed(t, e, "/first"), allowed(t, e, "/last"))
	}
	if got := tr.read.Load(); got > MaxSize {
		t.Errorf("body bytes read = %d, want at most %d", got, MaxSize)
	}
}

// TestFetchGzip: a gzip body is read whether the transport decodes it or
// the server sends it unasked.
func TestFetchGzip(t *testing.T) {
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte(testRules))
	zw.Close()
	srv, _ := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(zipped.Bytes())
	})
	for _, disable := range []bool{false, true} {
		t.Run(fmt.Sprint("DisableCompression=", disable), func(t *testing.T) {
			tr := &http.Transport{DisableCompression: disable}
			t.Cleanup(tr.CloseIdleConnections)
			c := newCache(t, newFakeClock())
			c.Client = &http.Client{Transport: tr}
			e, err := c.Get(context.Background(), urlOf(t, srv.URL+"/"))
			if err != nil || e.State != StateParsed || allowed(t, e, "/private") || !allowed(t, e, "/public") {
				t.Errorf("Get = %v, state %v, /private allowed %v; want nil, parsed, false", err, e.State, allowed(t, e, "/private"))
			}
		})
	}
}

// TestFetchRequest: robots.txt is fetched with the User-Agent, without
// cookies, through the caller's client, which is not changed.
func TestFetchRequest(t *testing.T) {
	type seen struct{ ua, cookie string }
	got := make(chan seen, 10)
	srv, _ := robotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.Redirect(w, r, "/real-robots.txt", http.StatusFound)
			return
		}
		got <- seen{r.UserAgent(), r.Header.Get("Cookie")}
		fmt.Fprint(w, testRules)
	})
	jar, _ := cookiejar.New(nil)
	u := urlOf(t, srv.URL+"/")
	jar.SetCookies(u, []*http.Cookie{{Name: "session", Value: "secret"}})
	var ownRedirects atomic.Int64
	client := &http.Client{
		Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			ownRedirects.Add(1)
			return errors.New("the caller's CheckRedirect must not be used")
		},
	}
	c := newCache(t, newFakeClock())
	c.Client = client
	c.UserAgent = "TestBot/1.0 (+https://example.org/bot)"
	e, err := c.Get(context.Background(), u)
	if err != nil || e.State != StateParsed {
		t.Fatalf("Get = %v, state %v; want nil, parsed", err, e.State)
	}
	if s := <-got; s.ua != c.UserAgent || s.cookie != "" {
		t.Errorf("request had User-Agent %q, Cookie %q; want %q, none", s.ua, s.cookie, c.UserAgent)
	}
	if ownRedirects.Load() != 0 || client.Jar != jar || client.CheckRedirect == nil {
		t.Errorf("the caller's client was used or changed")
	}
}

func TestFetchErrorUnwrap(t *testing.T) {
	err := error(&FetchError{URL: "https://example.com/robots.txt", StatusCode: 200, Err: io.ErrUnexpectedEOF})
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("errors.Is(%v, io.ErrUnexpectedEOF) = false, want true", err)
	}
	for _, fe := range []*FetchError{
		{URL: "https://example.com/robots.txt", StatusCode: 503},
		{URL: "https://example.com/robots.txt", Err: context.DeadlineExceeded},
	} {
		if s := fe.Error(); !strings.HasPrefix(s, "policy: ") || !strings.Contains(s, fe.URL) {
			t.Errorf("FetchError.Error() = %q, want the policy: prefix and the URL", s)
		}
	}
}

// readAtMost reads what io.ReadAll(io.LimitReader(r, max)) reads, whatever
// size the Content-Length claims, in reads of any length.
func TestReadAtMost(t *testing.T) {
	tests := []struct {
		body      string
		max, size int64
		want      string
	}{
		{"", 10, -1, ""},
		{"", 10, 0, ""},
		{"User-agent: *", 100, 13, "User-agent: *"},
		{"User-agent: *", 100, -1, "User-agent: *"},
		{"User-agent: *", 100, 3, "User-agent: *"},  // a size too small: the buffer grows
		{"User-agent: *", 100, 90, "User-agent: *"}, // too large: the end is seen
		{"User-agent: *", 4, 13, "User"},            // cut at max
		{"User-agent: *", 4, -1, "User"},
		{strings.Repeat("x", 3000), 2500, -1, strings.Repeat("x", 2500)},
		{strings.Repeat("x", 3000), 5000, 3000, strings.Repeat("x", 3000)},
		// A Content-Length past anything sent, as large as net/http
		// accepts: no overflow, and no room made for it up front.
		{"User-agent: *", 100, math.MaxInt64, "User-agent: *"},
		{"User-agent: *", MaxSize, math.MaxInt64 - 1, "User-agent: *"},
		{strings.Repeat("x", 3000), MaxSize, math.MaxInt64, strings.Repeat("x", 3000)},
	}
	for _, tt := range tests {
		for _, step := range []int{1, 7, 1 << 20} {
			r := &chunkReader{s: tt.body, step: step}
			got, err := readAtMost(r, tt.max, tt.size)
			if err != nil || string(got) != tt.want {
				t.Errorf("readAtMost(%d bytes in reads of %d, %d, %d) = %d bytes, %v; want %d bytes, nil",
					len(tt.body), step, tt.max, tt.size, len(got), err, len(tt.want))
			}
		}
	}
	if b, _ := readAtMost(strings.NewReader("x"), MaxSize, math.MaxInt64); cap(b) > sizeHint+1 {
		t.Errorf("readAtMost(1 byte claiming Content-Length 2⁶³−1) made room for %d bytes, want sizeHint+1 at most", cap(b))
	}
	cut := errors.New("policy test: cut short")
	if _, err := readAtMost(io.MultiReader(strings.NewReader("User"), iotestErr{cut}), 100, 13); !errors.Is(err, cut) {
		t.Errorf("readAtMost(a body cut short) = %v, want its error", err)
	}
}

// A chunkReader reads s at most step bytes at a time.
type chunkReader struct {
	s    string
	step int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.step)], r.s)
	r.s = r.s[n:]
	return n, nil
}

// An iotestErr fails every read with err.
type iotestErr struct{ err error }

func (r iotestErr) Read([]byte) (int, error) { return 0, r.err }

// A server may claim any Content-Length net/http accepts, up to 2⁶³−1:
// the fetch neither panics nor makes room for it, and a body that ends
// short of its claim is cut short (unreachable), as with any length.
func TestFetchHugeContentLength(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			if l, err := br.ReadString('\n'); err != nil || l == "\r\n" {
				break
			}
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775807\r\n\r\nUser-agent: *\nDisallow: /\n")
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o := fetch(ctx, &http.Client{}, "http://"+ln.Addr().String(), "TestBot", time.Now)
	if o.state != StateUnreachable || o.err == nil {
		t.Errorf("fetch(a body short of Content-Length 2⁶³−1) = state %v, err %v; want unreachable, a body cut short", o.state, o.err)
	}
}
