package policy

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxRedirects is the number of redirects followed for robots.txt.
// RFC 9309 §2.3.1.2: crawlers SHOULD follow at least five consecutive
// redirects; Google follows five and then treats robots.txt as a 404.
const maxRedirects = 5

// ErrTooManyRedirects is the Err of the [FetchError] recorded when
// robots.txt redirected more than 5 times or in a loop. That outcome is
// [StateUnavailable]: RFC 9309 §2.3.1.2 and Google treat it as a 404.
var ErrTooManyRedirects = errors.New("policy: robots.txt redirected more than 5 times or in a loop")

// errContentEncoding is the Err of a fetch whose body came in an encoding
// that was not asked for and cannot be read.
var errContentEncoding = errors.New("policy: unsupported Content-Encoding")

// An outcome is what one robots.txt fetch found.
type outcome struct {
	state  State
	status int    // 0 if no response arrived
	body   []byte // for StateParsed: the first MaxSize bytes
	url    string // for StateParsed: the URL the body came from, if redirected
	err    *FetchError

	maxAge     time.Duration // Cache-Control max-age; see hasMaxAge
	hasMaxAge  bool          // max-age, no-store or no-cache was sent
	retryAfter time.Duration // Retry-After from the fetch's end; see RetryAfter
	hasRetry   bool          // Retry-After asked for a wait
}

// fetchClient returns the client robots.txt is fetched with: a shallow copy
// of base (or of a new client when base is nil), so that its transport,
// proxy and timeout apply, without its cookie jar (robots.txt is fetched
// without cookies) and with the redirect rule of RFC 9309 §2.3.1.2 in
// place of its own CheckRedirect. base itself is not changed.
func fetchClient(base *http.Client) *http.Client {
	var c http.Client
	if base != nil {
		c = *base
	}
	c.Jar = nil
	c.CheckRedirect = checkRedirect
	return &c
}

// checkRedirect allows at most maxRedirects hops, to any host, and stops a
// loop at once. The rules then still apply to the origin that was asked
// (RFC 9309 §2.3.1.2).
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return ErrTooManyRedirects
	}
	next := req.URL.String()
	for _, r := range via {
		if r.URL.String() == next {
			return ErrTooManyRedirects
		}
	}
	return nil
}

// fetch fetches origin + "/robots.txt" with client and classifies the
// result. ctx bounds the whole fetch, body included. now is the clock that
// an HTTP-date Retry-After is measured against when the response has no
// valid Date field (see [RetryAfter]).
func fetch(ctx context.Context, client *http.Client, origin, userAgent string, now func() time.Time) outcome {
	target := origin + "/robots.txt"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return outcome{state: StateUnreachable, err: &FetchError{URL: target, Err: err}}
	}
	if userAgent != "" {
		req.Header.Set("User-Agent", userAgent)
	}
	resp, err := client.Do(req)
	if resp != nil {
		// With a CheckRedirect error the body is already closed.
		defer resp.Body.Close()
	}
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is in the FetchError already
		}
	}
	var o outcome
	if resp != nil {
		o.status = resp.StatusCode
		o.maxAge, o.hasMaxAge = maxAge(resp.Header)
	}
	fail := func(err error) outcome {
		o.state = StateUnreachable
		o.err = &FetchError{URL: target, StatusCode: o.status, Err: err}
		if resp != nil {
			o.retryAfter, o.hasRetry = RetryAfter(resp.Header, now())
		}
		return o
	}

	// The one place where HTTP outcomes become robots.txt states.
	switch code := o.status; {
	case errors.Is(err, ErrTooManyRedirects):
		// RFC 9309 §2.3.1.2: past five redirects (or in a loop) the
		// crawler MAY assume robots.txt is unavailable; Google treats it
		// as a 404.
		o.state = StateUnavailable
		o.err = &FetchError{URL: target, StatusCode: code, Err: ErrTooManyRedirects}
		return o
	case err != nil:
		// RFC 9309 §2.3.1.4: a network error (DNS, connection refused or
		// reset, TLS, timeout) makes robots.txt unreachable.
		return fail(err)
	case 200 <= code && code < 300:
		// RFC 9309 §2.3.1.1: a successful response; its body is parsed.
		body, err := readBody(resp)
		if err != nil {
			// Google: interrupted connections and chunking errors are
			// handled as server errors (RFC 9309 §2.3.1.4).
			return fail(err)
		}
		o.state, o.body = StateParsed, body
		if final := resp.Request.URL.String(); final != target {
			o.url = final
		}
		return o
	case 300 <= code && code < 400:
		// RFC 9309 §2.3.1.2: a redirect that cannot be followed (no
		// Location, 304 and the like) is treated like too many redirects.
		o.state = StateUnavailable
		return o
	case code == http.StatusTooManyRequests:
		// Google: 429 is a server error, not a 4xx
		// (docs/robots-semantics.md#status-codes).
		return fail(nil)
	case 400 <= code && code < 500:
		// RFC 9309 §2.3.1.3: robots.txt is unavailable (401 and 403
		// included); the crawler may access any resource.
		o.state = StateUnavailable
		return o
	case 500 <= code && code < 600:
		// RFC 9309 §2.3.1.4: a server error makes robots.txt unreachable;
		// the crawler MUST assume complete disallow.
		return fail(nil)
	default:
		// Google: an invalid response is handled as a server error.
		return fail(nil)
	}
}

// readBody reads at most MaxSize bytes of the body; the rest is never read
// (RFC 9309 §2.5). A body cut short by the server is an error
// (io.ErrUnexpectedEOF), but one that is longer than MaxSize is not.
func readBody(resp *http.Response) ([]byte, error) {
	var r io.Reader = resp.Body
	size := resp.ContentLength
	// The transport decodes gzip that it asked for itself and then removes
	// the header; a body that still says gzip came through a transport
	// that did not (DisableCompression, or a custom RoundTripper).
	switch enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r, size = zr, -1
	default:
		return nil, errContentEncoding
	}
	return readAtMost(r, MaxSize, size)
}

// readAtMost reads r to its end, or to its first max bytes, as
// io.ReadAll(io.LimitReader(r, max)) does, into a buffer made for size
// bytes (the Content-Length; -1 if not known) where ReadAll would start
// with 512 and grow: a robots.txt of 40 bytes takes 41. size is the
// server's word: it is trusted up to sizeHint, and a larger claim (up to
// 2⁶³−1, which net/http accepts) only starts the buffer there; it grows
// with what the body brings.
func readAtMost(r io.Reader, max, size int64) ([]byte, error) {
	n := int64(512)
	if size >= 0 {
		n = min(size, sizeHint) + 1 // room to see the end without growing
	}
	b := make([]byte, 0, min(n, max))
	for int64(len(b)) < max {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grow as append does
		}
		room := b[len(b):min(int64(cap(b)), max)]
		k, err := r.Read(room)
		b = b[:len(b)+k]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// sizeHint is the most of a body's Content-Length that readAtMost makes
// room for before the body arrives.
const sizeHint = 64 << 10

// maxAge returns the lifetime that a response's Cache-Control header gives:
// the smallest max-age, or 0 for no-store and no-cache. ok is false when the
// header sets none of these.
//
// RFC 9309 §2.4: crawlers MAY use the cache control of RFC 9111.
func maxAge(h http.Header) (d time.Duration, ok bool) {
	for _, line := range h.Values("Cache-Control") {
		for _, dir := range strings.Split(line, ",") {
			name, value, _ := strings.Cut(strings.TrimSpace(dir), "=")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "no-store", "no-cache":
				d, ok = 0, true
			case "max-age":
				v := strings.Trim(strings.TrimSpace(value), `"`)
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil || n < 0 {
					continue
				}
				if n > int64(maxDuration/time.Second) {
					n = int64(maxDuration / time.Second)
				}
				if s := time.Duration(n) * time.Second; !ok || s < d {
					d, ok = s, true
				}
			}
		}
	}
	return d, ok
}

const maxDuration = time.Duration(1<<63 - 1)
