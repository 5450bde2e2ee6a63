// Package collysuite runs colly's own test suite with a robotsmw Guard
// attached to every collector and clone: attaching the Guard
// must not break what colly promises.
//
// Its test copies colly's module source (v2.3.0, from the module cache)
// into a temporary module, renames colly's NewCollector and Clone so that
// wrappers of the same names attach a Guard{Rate: rate.Inf} to every
// collector (a clone gets its parent's Guard), and runs `go test` on the
// copy, with -race. Skipped are only three tests of colly's own robots.txt
// handling, which the Guard replaces by design (see skipped). It takes
// about 15 s, so it runs in `go test ./...` but not with -race (its run
// has -race itself) nor -short. The package has no other code.
package collysuite
