package robotsmw_test

import (
	"sync"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/internal/pacertest"
	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// The Pacer contract, against the MemoryPacer on a manual clock: its
// sweeps run on the calls after the clock moved on, with none between.
// Once with Idle zero (the default horizon), once with Idle set.
func TestMemoryPacerContract(t *testing.T) {
	for _, tc := range []struct {
		name string
		idle time.Duration // MemoryPacer.Idle
		want time.Duration // the horizon it documents
	}{
		{"default Idle", 0, robotsmw.DefaultPacerIdle},
		{"Idle 5s", 5 * time.Second, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pacertest.Run(t, func(t *testing.T) pacertest.Home {
				var mu sync.Mutex
				now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
				p := &robotsmw.MemoryPacer{Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }, Idle: tc.idle}
				return pacertest.Home{
					Pacer:   p,
					Advance: func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() },
					Idle:    tc.want,
					Hosts:   p.HostsKept,
				}
			})
		})
	}
}
