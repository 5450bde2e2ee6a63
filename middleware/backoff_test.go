package robotsmw

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(1994, 11, 6, 8, 49, 0, 0, time.UTC)
	tests := []struct {
		name   string
		values []string
		date   string
		want   time.Duration
		wantOK bool
	}{
		// RFC 9110 §10.2.3: delay-seconds.
		{"seconds", []string{"120"}, "", 120 * time.Second, true},
		{"zero", []string{"0"}, "", 0, true},
		{"spaces", []string{" 7 "}, "", 7 * time.Second, true},
		{"overflow", []string{"99999999999999999999"}, "", maxDuration, true},
		{"negative", []string{"-1"}, "", 0, false},
		{"fraction", []string{"1.5"}, "", 0, false},
		{"garbage", []string{"soon"}, "", 0, false},
		{"empty", []string{""}, "", 0, false},
		{"absent", nil, "", 0, false},
		// RFC 9110 §5.6.7: all three HTTP-date formats, measured from Date.
		{"imf-fixdate with date", []string{"Sun, 06 Nov 1994 08:49:37 GMT"}, "Sun, 06 Nov 1994 08:49:07 GMT", 30 * time.Second, true},
		{"rfc850 with date", []string{"Sunday, 06-Nov-94 08:49:37 GMT"}, "Sun, 06 Nov 1994 08:49:27 GMT", 10 * time.Second, true},
		{"asctime with date", []string{"Sun Nov  6 08:49:37 1994"}, "Sun, 06 Nov 1994 08:48:37 GMT", time.Minute, true},
		// RFC 9110 §6.6.1: without a valid Date the local clock is used.
		{"imf-fixdate without date", []string{"Sun, 06 Nov 1994 08:49:37 GMT"}, "", 37 * time.Second, true},
		{"imf-fixdate bad date", []string{"Sun, 06 Nov 1994 08:49:37 GMT"}, "yesterday", 37 * time.Second, true},
		{"past date", []string{"Sun, 06 Nov 1994 08:00:00 GMT"}, "", 0, true},
		// A singleton field sent twice: the first valid line counts.
		{"first valid line", []string{"later", "5", "9"}, "", 5 * time.Second, true},
	}
	for _, tt := range tests {
		h := http.Header{}
		for _, v := range tt.values {
			h.Add("Retry-After", v)
		}
		if tt.date != "" {
			h.Set("Date", tt.date)
		}
		got, ok := retryAfter(h, now)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("%s: retryAfter(%q, Date %q) = %v, %v, want %v, %v", tt.name, tt.values, tt.date, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestBackoff(t *testing.T) {
	const base, limit = time.Second, 10 * time.Second
	tests := []struct {
		n    int
		u    float64
		want time.Duration
	}{
		{1, 0, time.Second},
		{2, 0, 2 * time.Second},
		{4, 0, 8 * time.Second},
		{5, 0, limit},
		{60, 0, limit},
		{1, 0.5, 1125 * time.Millisecond},
		{3, 0.999, 4*time.Second + time.Duration(0.999*float64(time.Second))},
		{4, 0.999, 8*time.Second + time.Duration(0.999*float64(2*time.Second))},
		{5, 0.5, limit},
	}
	for _, tt := range tests {
		if got := backoff(base, limit, tt.n, tt.u); got != tt.want {
			t.Errorf("backoff(%v, %v, %d, %v) = %v, want %v", base, limit, tt.n, tt.u, got, tt.want)
		}
	}
	// Jitter only lengthens: never below the exponential step (or the cap).
	for n := 1; n < 8; n++ {
		for _, u := range []float64{0, 0.1, 0.5, 0.9, 0.9999} {
			step := min(base<<(n-1), limit)
			if got := backoff(base, limit, n, u); got < step || got > limit {
				t.Errorf("backoff(%v, %v, %d, %v) = %v, want in [%v, %v]", base, limit, n, u, got, step, limit)
			}
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		status int
		want   class
	}{
		{0, soft}, {200, healthy}, {204, healthy}, {301, healthy}, {304, healthy},
		{404, healthy}, {410, healthy}, {400, neutral}, {401, neutral}, {403, neutral},
		{429, hard}, {503, hard}, {500, soft}, {502, soft}, {504, soft}, {501, neutral},
	}
	for _, tt := range tests {
		if got := classify(tt.status); got != tt.want {
			t.Errorf("classify(%d) = %v, want %v", tt.status, got, tt.want)
		}
	}
}
