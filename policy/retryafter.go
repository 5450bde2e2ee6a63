package policy

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// retryAfterLimit is the longest wait RetryAfter reports: 100 years of 365
// days, a practical "never" that is still far from the limit of a
// time.Duration, so that adding it to a time, or a little more to it,
// cannot overflow.
const retryAfterLimit = 100 * 365 * 24 * time.Hour

// RetryAfter returns the wait that a response asks for in its Retry-After
// field, measured from now, and whether the field asks for one.
//
// RFC 9110 §10.2.3: the value is delay-seconds (ASCII digits) or an
// HTTP-date. RFC 9110 §5.6.7: all three date forms are accepted
// (IMF-fixdate, RFC 850 and asctime; see [http.ParseTime]). A date is on
// the server's clock, so it is measured from the response's own Date field
// when that parses (RFC 9110 §6.6.1), which cancels clock skew, and from
// now otherwise. Of several field lines (the field is a singleton) the
// first that parses as either form decides; lines that parse as neither
// (negative numbers, fractions, garbage) are skipped.
//
// The wait is honoured as sent and never shortened, with a floor of one
// second: a date less than a second ahead gives 1s. A wait longer than 100
// years (of 365 days), delay-seconds too large for any integer included,
// is reported as 100 years, so that it can be added to a time without
// overflow. ok is false, and d is 0, when the field is absent or no line
// parses, and when the deciding line asks for no wait at all: "0", or a
// date that is now or past. Callers then use their own back-off.
func RetryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	for _, v := range h.Values("Retry-After") {
		v = strings.TrimSpace(v)
		if isDigits(v) {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n > int64(retryAfterLimit/time.Second) {
				return retryAfterLimit, true // absurdly far away
			}
			return retryWait(time.Duration(n) * time.Second)
		}
		t, err := http.ParseTime(v)
		if err != nil {
			continue
		}
		ref := now
		if date, err := http.ParseTime(h.Get("Date")); err == nil {
			ref = date
		}
		return retryWait(t.Sub(ref)) // Sub saturates; retryWait caps
	}
	return 0, false
}

// retryWait applies RetryAfter's floor and cap to the wait that a value
// asks for.
func retryWait(d time.Duration) (time.Duration, bool) {
	if d <= 0 {
		return 0, false
	}
	return min(max(d, time.Second), retryAfterLimit), true
}

// isDigits reports whether s is delay-seconds: one or more ASCII digits
// (RFC 9110 §10.2.3, 1*DIGIT).
func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
