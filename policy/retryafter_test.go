package policy

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(1994, 11, 6, 8, 49, 0, 0, time.UTC)
	tests := []struct {
		name   string
		values []string
		date   string
		now    time.Time // if zero, now
		want   time.Duration
		wantOK bool
	}{
		// RFC 9110 §10.2.3: delay-seconds, 1*DIGIT.
		{"seconds", []string{"120"}, "", time.Time{}, 120 * time.Second, true},
		{"one second", []string{"1"}, "", time.Time{}, time.Second, true},
		{"spaces", []string{" 7 "}, "", time.Time{}, 7 * time.Second, true},
		{"leading zeros", []string{"007"}, "", time.Time{}, 7 * time.Second, true},
		{"beyond 24h", []string{"999999"}, "", time.Time{}, 999999 * time.Second, true},
		{"at the limit", []string{"3153600000"}, "", time.Time{}, retryAfterLimit, true},
		{"past the limit", []string{"3153600001"}, "", time.Time{}, retryAfterLimit, true},
		{"int64 seconds", []string{"9223372036854775807"}, "", time.Time{}, retryAfterLimit, true},
		{"overflow", []string{"99999999999999999999"}, "", time.Time{}, retryAfterLimit, true},
		// "0" asks for no wait: the caller's own back-off applies.
		{"zero", []string{"0"}, "", time.Time{}, 0, false},
		{"zeros", []string{"000"}, "", time.Time{}, 0, false},
		{"negative", []string{"-1"}, "", time.Time{}, 0, false},
		{"plus sign", []string{"+5"}, "", time.Time{}, 0, false},
		{"fraction", []string{"1.5"}, "", time.Time{}, 0, false},
		{"exponent", []string{"1e3"}, "", time.Time{}, 0, false},
		{"non-ASCII digits", []string{"١٢٣"}, "", time.Time{}, 0, false},
		{"garbage", []string{"soon"}, "", time.Time{}, 0, false},
		{"empty", []string{""}, "", time.Time{}, 0, false},
		{"absent", nil, "", time.Time{}, 0, false},
		// RFC 9110 §5.6.7: all three HTTP-date forms; RFC 9110 §6.6.1: a
		// date is measured from the response's Date.
		{"imf-fixdate with date", []string{"Sun, 06 Nov 1994 08:49:37 GMT"}, "Sun, 06 Nov 1994 08:49:07 GMT", time.Time{}, 30 * time.Second, true},
		{"rfc850 with date", []string{"Sunday, 06-Nov-94 08:49:37 GMT"}, "Sun, 06 Nov 1994 08:49:27 GMT", time.Time{}, 10 * time.Second, true},
		{"asctime with date", []string{"Sun Nov  6 08:49:37 1994"}, "Sun, 06 Nov 1994 08:48:37 GMT", time.Time{}, time.Minute, true},
		{"server clock behind", []string{"Sun, 06 Nov 1994 07:51:00 GMT"}, "Sun, 06 Nov 1994 07:49:00 GMT", time.Time{}, 2 * time.Minute, true},
		{"server clock ahead", []string{"Sun, 06 Nov 1994 09:50:00 GMT"}, "Sun, 06 Nov 1994 09:49:00 GMT", time.Time{}, time.Minute, true},
		{"date equals Date", []string{"Sun, 06 Nov 1994 09:49:00 GMT"}, "Sun, 06 Nov 1994 09:49:00 GMT", time.Time{}, 0, false},
		{"date before Date", []string{"Sun, 06 Nov 1994 08:49:30 GMT"}, "Sun, 06 Nov 1994 08:49:40 GMT", time.Time{}, 0, false},
		{"far future", []string{"Fri, 31 Dec 9999 23:59:59 GMT"}, "Mon, 01 Jan 0001 00:00:00 GMT", time.Time{}, retryAfterLimit, true},
		// Without a valid Date the local clock is used.
		{"imf-fixdate without date", []string{"Sun, 06 Nov 1994 08:49:37 GMT"}, "", time.Time{}, 37 * time.Second, true},
		{"imf-fixdate bad date", []string{"Sun, 06 Nov 1994 08:49:37 GMT"}, "yesterday", time.Time{}, 37 * time.Second, true},
		{"past date", []string{"Sun, 06 Nov 1994 08:00:00 GMT"}, "", time.Time{}, 0, false},
		{"date is now", []string{"Sun, 06 Nov 1994 08:49:00 GMT"}, "", time.Time{}, 0, false},
		{"bad date", []string{"Sun, 06 Nov 1994 25:61:61 GMT"}, "", time.Time{}, 0, false},
		// The floor: a wait under a second is a second; above, as sent.
		{"0.4s ahead", []string{"Sun, 06 Nov 1994 08:49:01 GMT"}, "", now.Add(600 * time.Millisecond), time.Second, true},
		{"1.5s ahead", []string{"Sun, 06 Nov 1994 08:49:02 GMT"}, "", now.Add(500 * time.Millisecond), 1500 * time.Millisecond, true},
		// A singleton field sent twice: the first line that parses counts.
		{"first valid line", []string{"later", "5", "9"}, "", time.Time{}, 5 * time.Second, true},
		{"first valid date", []string{"-3", "Sun, 06 Nov 1994 08:49:37 GMT", "9"}, "", time.Time{}, 37 * time.Second, true},
		{"first line zero", []string{"0", "5"}, "", time.Time{}, 0, false},
	}
	for _, tt := range tests {
		h := http.Header{}
		for _, v := range tt.values {
			h.Add("Retry-After", v)
		}
		if tt.date != "" {
			h.Set("Date", tt.date)
		}
		at := now
		if !tt.now.IsZero() {
			at = tt.now
		}
		got, ok := RetryAfter(h, at)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("%s: RetryAfter(%q, Date %q) = %v, %v; want %v, %v", tt.name, tt.values, tt.date, got, ok, tt.want, tt.wantOK)
		}
	}
}

// TestRetryAfterNoOverflow: the longest wait can be added to any time a
// response can name (RFC 9110 §5.6.7 dates run to the year 9999).
func TestRetryAfterNoOverflow(t *testing.T) {
	h := http.Header{"Retry-After": {"99999999999999999999"}}
	for _, now := range []time.Time{
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Now(), // with a monotonic reading
	} {
		d, ok := RetryAfter(h, now)
		if !ok || !now.Add(d).After(now) || now.Add(d).Sub(now) != d || d+d <= d {
			t.Errorf("RetryAfter(%q) at %v = %v, %v; want a wait that adds to the time without overflow", h["Retry-After"], now, d, ok)
		}
	}
}

// FuzzRetryAfter checks the contract of RetryAfter for any Retry-After
// value and Date field:
//   - it never panics; when ok is false d is 0, and when ok is true d is
//     in [1s, retryAfterLimit] and adds to now without overflow;
//   - delay-seconds (RFC 9110 §10.2.3: ASCII digits only) give exactly
//     that many seconds, capped; "0" gives ok == false;
//   - a line that is neither delay-seconds nor an HTTP-date is skipped:
//     a valid line after it decides; a line that parses decides alone;
//   - an HTTP-date measured on the local clock never ends before the date
//     and lengthens a wait by less than the 1 s floor; one measured
//     against a valid Date field does not depend on the local clock.
func FuzzRetryAfter(f *testing.F) {
	for _, seed := range []struct{ value, date string }{
		{"120", ""},
		{"0", ""},
		{" 7 ", ""},
		{"\t42\r\n", ""},
		{"007", ""},
		{"3153600000", ""},
		{"3153600001", ""},
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
		{"Wed, 01 Jan 2025 00:00:01 GMT", ""},
		{"Wed, 01 Jan 2025 00:10:00 GMT", ""},
		{"Fri, 31 Dec 9999 23:59:59 GMT", "Mon, 01 Jan 0001 00:00:00 GMT"},
		{"Mon, 01 Jan 0001 00:00:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT"},
		{"Fri, 31 Dec 9999 23:59:59 GMT", ""},
		{"Sun, 06 Nov 1994 08:49:37 GMT", "yesterday"},
		{"Sun, 06 Nov 1994 25:61:61 GMT", ""},
	} {
		f.Add(seed.value, seed.date)
	}
	now := time.Date(2025, 1, 1, 0, 0, 0, 400_000_000, time.UTC)
	f.Fuzz(func(t *testing.T, value, date string) {
		h := http.Header{}
		h.Add("Retry-After", value)
		if date != "" {
			h.Add("Date", date)
		}
		d, ok := RetryAfter(h, now)
		switch {
		case !ok && d != 0:
			t.Fatalf("RetryAfter(%q, Date %q) = %v, false; want 0 when ok is false", value, date, d)
		case ok && (d < time.Second || d > retryAfterLimit):
			t.Fatalf("RetryAfter(%q, Date %q) = %v, true; want in [1s, %v]", value, date, d, retryAfterLimit)
		case ok && now.Add(d).Sub(now) != d:
			t.Fatalf("RetryAfter(%q, Date %q) = %v; %v + it overflows", value, date, d, now)
		}

		// A second line decides only when the first does not parse.
		h.Add("Retry-After", "7")
		d2, ok2 := RetryAfter(h, now)

		v := strings.TrimSpace(value)
		if v != "" && strings.Trim(v, "0123456789") == "" {
			want, wantOK := retryAfterLimit, true
			if n, err := strconv.ParseUint(v, 10, 64); err == nil && n <= uint64(retryAfterLimit/time.Second) {
				want, wantOK = time.Duration(n)*time.Second, n > 0
			}
			if !wantOK {
				want = 0
			}
			if d != want || ok != wantOK {
				t.Fatalf("RetryAfter(%q) = %v, %v; want %v, %v", value, d, ok, want, wantOK)
			}
			if d2 != d || ok2 != ok {
				t.Fatalf("RetryAfter(%q, \"7\") = %v, %v; want %v, %v (the first line decides)", value, d2, ok2, d, ok)
			}
			return
		}

		at, err := http.ParseTime(v)
		if err != nil {
			if ok || d2 != 7*time.Second || !ok2 {
				t.Fatalf("RetryAfter(%q) = %v, %v and with a \"7\" after it %v, %v; want it skipped", value, d, ok, d2, ok2)
			}
			return
		}
		if d2 != d || ok2 != ok {
			t.Fatalf("RetryAfter(%q, \"7\") = %v, %v; want %v, %v (the first line decides)", value, d2, ok2, d, ok)
		}
		if _, err := http.ParseTime(date); err == nil {
			if d3, ok3 := RetryAfter(h, now.Add(time.Hour)); d3 != d || ok3 != ok {
				t.Fatalf("RetryAfter(%q, Date %q) = %v, %v at %v but %v, %v an hour later; want the Date to decide",
					value, date, d, ok, now, d3, ok3)
			}
			return
		}
		ahead := at.Sub(now)
		if ok != (ahead > 0) {
			t.Fatalf("RetryAfter(%q) at %v = %v, %v; want ok == %v", value, now, d, ok, ahead > 0)
		}
		if ok && ahead < retryAfterLimit && (d < ahead || d-ahead >= time.Second) {
			t.Fatalf("RetryAfter(%q) at %v = %v; want in [%v, %v + 1s)", value, now, d, ahead, ahead)
		}
	})
}
