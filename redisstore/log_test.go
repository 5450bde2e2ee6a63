package redisstore

import (
	"bytes"
	"context"
	"github.com/robotsmw/robotsmw/pace"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/internal/redistest"
)

// TestFleetLog: the Fleet's Logger is told when Redis stops answering and
// when it answers again, once each.
func TestFleetLog(t *testing.T) {
	srv := redistest.Start(t)
	var buf bytes.Buffer // slog's handler serialises its writes
	f := New(srv.Client())
	f.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	ctx := context.Background()
	srv.Stop()
	if _, err := f.Pacer().Reserve(ctx, "example.com", pace.Ask{Floor: time.Second, Limit: time.Minute, NoLease: true}); err == nil {
		t.Errorf("Reserve with Redis down: no error")
	}
	f.Pacer().Reserve(ctx, "example.com", pace.Ask{Floor: time.Second, Limit: time.Minute, NoLease: true})
	srv.Restart()
	if _, err := f.Pacer().Reserve(ctx, "example.com", pace.Ask{Floor: time.Second, Limit: time.Minute, NoLease: true}); err != nil {
		t.Errorf("Reserve after Redis restarted: %v", err)
	}
	log := buf.String()
	for _, want := range []string{
		`level=WARN msg="redis unreachable" member=` + f.ID() + ` mode=pause error=`,
		`level=INFO msg="redis reachable" member=` + f.ID(),
	} {
		if n := strings.Count(log, want); n != 1 {
			t.Errorf("log has %q %d times, want once; log:\n%s", want, n, log)
		}
	}
}
