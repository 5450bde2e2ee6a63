package robotsmw

import (
	"errors"
	"fmt"
	"math"
	"path"
	"strings"
	"time"
)

// errSettings is wrapped by every complaint of Guard.validate.
var errSettings = errors.New("robotsmw: invalid Guard settings")

// validate reports the first of g's fields that has a value its
// documentation does not give a meaning: a setting that would silently
// turn politeness off, or do something else than it says, is refused
// rather than guessed at. Zero values are always valid (they mean the
// documented defaults).
func (g *Guard) validate() error {
	bad := func(field string, v any, want string) error {
		return fmt.Errorf("%w: %s is %v; %s", errSettings, field, v, want)
	}
	durations := []struct {
		name string
		d    time.Duration
	}{
		{"Backoff", g.Backoff}, {"MaxBackoff", g.MaxBackoff},
		{"MaxWait", g.MaxWait}, {"IdleTimeout", g.IdleTimeout},
	}
	for _, f := range durations {
		if f.d < 0 {
			return bad(f.name, f.d, "want 0 (the default) or more")
		}
	}
	switch {
	case g.Rate < 0 || math.IsNaN(float64(g.Rate)):
		return bad("Rate", g.Rate, "want 0 (the default, 1 per second), a positive rate, or rate.Inf for no limit but Crawl-delay and back-off")
	case g.MaxRobotsFailures < 0:
		return bad("MaxRobotsFailures", g.MaxRobotsFailures, "want 0 (the default, 3) or more")
	case g.InFlight < 0:
		return bad("InFlight", g.InFlight, "want 0 (the default, 1) or more")
	case g.MaxRobotsFetches < 0:
		return bad("MaxRobotsFetches", g.MaxRobotsFetches, "want 0 (the default, 64) or more")
	case !(g.Jitter >= 0 && g.Jitter <= 1):
		return bad("Jitter", g.Jitter, "want a fraction from 0 to 1")
	}
	for i, r := range g.Hosts {
		field := fmt.Sprintf("Hosts[%d]", i)
		if _, err := path.Match(r.Host, ""); r.Host == "" || err != nil || strings.ContainsAny(r.Host, "/:") {
			return bad(field+".Host", fmt.Sprintf("%q", r.Host), "want a host name or a path.Match pattern, without scheme or port")
		}
		if r.Rate < 0 || math.IsNaN(float64(r.Rate)) {
			return bad(field+".Rate", r.Rate, "want 0 (Guard.Rate), a positive rate, or rate.Inf")
		}
		if r.InFlight < 0 {
			return bad(field+".InFlight", r.InFlight, "want 0 (Guard.InFlight) or more")
		}
	}
	return nil
}

// mustValidate panics with validate's complaint: Attach and Transport,
// which have no error to return, refuse to run a Guard that would not do
// what its settings say.
func (g *Guard) mustValidate() {
	if err := g.validate(); err != nil {
		panic(err)
	}
}
