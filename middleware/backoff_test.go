package robotsmw

import (
	"testing"
	"time"
)

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
