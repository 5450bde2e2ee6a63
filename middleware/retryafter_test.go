package robotsmw

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzRetryAfter checks the contract of retryAfter for any Retry-After
// value and Date field:
//   - it never panics, and a value it ignores gives 0;
//   - a wait is never negative;
//   - delay-seconds (RFC 9110 §10.2.3: ASCII digits only) give exactly
//     that many seconds, and values beyond time.Duration give maxDuration,
//     never a wrapped, short or negative wait;
//   - an HTTP-date (RFC 9110 §5.6.7, any of the three formats) is accepted,
//     and without a Date field the wait never ends before that date on the
//     local clock; a later clock never lengthens it, nor shortens it by
//     more than the clock moved.
func FuzzRetryAfter(f *testing.F) {
	for _, seed := range []struct{ value, date string }{
		{"120", ""},
		{"0", ""},
		{" 7 ", ""},
		{"\t42\r\n", ""},
		{"007", ""},
		{"9223372036", ""},
		{"9223372037", ""},
		{"9223372036854775807", ""},
		{"18446744073709551616", ""},
		{"99999999999999999999", ""},
		{"-1", ""},
		{"+5", ""},
		{"1.5", ""},
		{"1e3", ""},
		{"0x10", ""},
		{"١٢٣", ""},
		{"soon", ""},
		{"", ""},
		{"Sun, 06 Nov 1994 08:49:37 GMT", ""},
		{"Sun, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:07 GMT"},
		{"Sunday, 06-Nov-94 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:27 GMT"},
		{"Sun Nov  6 08:49:37 1994", "Sun, 06 Nov 1994 08:48:37 GMT"},
		{"Wed, 01 Jan 2025 00:10:00 GMT", ""},
		{"Fri, 31 Dec 9999 23:59:59 GMT", "Mon, 01 Jan 0001 00:00:00 GMT"},
		{"Mon, 01 Jan 0001 00:00:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT"},
		{"Sun, 06 Nov 1994 08:49:37 GMT", "yesterday"},
		{"Sun, 06 Nov 1994 25:61:61 GMT", ""},
	} {
		f.Add(seed.value, seed.date)
	}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, value, date string) {
		h := http.Header{}
		h.Add("Retry-After", value)
		if date != "" {
			h.Add("Date", date)
		}
		d, ok := retryAfter(h, now)
		if d < 0 {
			t.Fatalf("retryAfter(%q, Date %q) = %v, want ≥ 0", value, date, d)
		}
		if !ok && d != 0 {
			t.Fatalf("retryAfter(%q, Date %q) = %v, false; want 0 when ignored", value, date, d)
		}

		v := strings.TrimSpace(value)
		if v != "" && strings.Trim(v, "0123456789") == "" {
			want := maxDuration
			if n, err := strconv.ParseUint(v, 10, 64); err == nil && n <= uint64(maxDuration/time.Second) {
				want = time.Duration(n) * time.Second
			}
			if d != want || !ok {
				t.Fatalf("retryAfter(%q) = %v, %v; want %v, true", value, d, ok, want)
			}
			return
		}

		at, err := http.ParseTime(v)
		if err != nil {
			if ok {
				t.Fatalf("retryAfter(%q) = %v, true; want it ignored (neither delay-seconds nor HTTP-date)", value, d)
			}
			return
		}
		if !ok {
			t.Fatalf("retryAfter(%q) = %v, false; want the HTTP-date accepted", value, d)
		}
		if date != "" {
			return // measured against the server's Date; checked in TestRetryAfter
		}
		if wait := at.Sub(now); wait > 0 && wait < maxDuration && now.Add(d).Before(at) {
			t.Fatalf("retryAfter(%q) at %v = %v, ends before the date", value, now, d)
		}
		later, _ := retryAfter(h, now.Add(time.Second))
		if later > d || d-later > time.Second {
			t.Fatalf("retryAfter(%q) = %v at %v but %v a second later, want in [%v-1s, %v]", value, d, now, later, d, d)
		}
	})
}
