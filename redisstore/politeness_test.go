package redisstore

import (
	"context"
	"github.com/robotsmw/robotsmw/pace"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/internal/redistest"
)

// Two crawls with separate frontiers (prefixes) share one schedule per
// host when they name the same Politeness, and none when they do not.
func TestPolitenessNamespace(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	const interval = time.Second
	for _, tt := range []struct {
		name             string
		polite1, polite2 string
		shared           bool
	}{
		{"same namespace", "bot", "bot", true},
		{"default: the prefix", "", "", false},
	} {
		a, b := testFleet(t, srv), testFleet(t, srv)
		a.Prefix, b.Prefix = "crawl-a:"+tt.name, "crawl-b:"+tt.name
		a.Politeness, b.Politeness = tt.polite1, tt.polite2
		if _, err := a.Pacer().Reserve(ctx, "x.test", pace.Ask{Floor: interval, Limit: time.Minute, NoLease: true}); err != nil {
			t.Fatal(err)
		}
		s, err := b.Pacer().Reserve(ctx, "x.test", pace.Ask{Floor: interval, Limit: time.Minute, NoLease: true})
		if err != nil {
			t.Fatal(err)
		}
		if waited := s.Wait > interval/2; waited != tt.shared {
			t.Errorf("%s: crawl b's first Reserve on x.test after crawl a's waits %v, want a wait: %v", tt.name, s.Wait, tt.shared)
		}
		if err := a.Queue().AddRequest(serial(t, "http://x.test/")); err != nil {
			t.Fatal(err)
		}
		if st, _ := b.Stats(ctx); st.Queued != 0 {
			t.Errorf("%s: crawl b sees %d queued, want its own frontier (0)", tt.name, st.Queued)
		}
	}
}
