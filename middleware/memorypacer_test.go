package robotsmw_test

import (
	"sync"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/internal/pacertest"
	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// The Pacer contract, against the MemoryPacer on a manual clock.
func TestMemoryPacerContract(t *testing.T) {
	pacertest.Run(t, func(t *testing.T) pacertest.Home {
		var mu sync.Mutex
		now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		p := &robotsmw.MemoryPacer{Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }}
		return pacertest.Home{Pacer: p, Advance: func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }}
	})
}
