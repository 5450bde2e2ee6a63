package main

import robotsmw "github.com/robotsmw/robotsmw/middleware"

// fixedPace turns g's latency-aware pacing off. It is a file of its own
// so that the scenario can be built against a version of the Guard from
// before FixedPace, with this file replaced by one that fails.
func fixedPace(g *robotsmw.Guard) error {
	g.FixedPace = true
	return nil
}
