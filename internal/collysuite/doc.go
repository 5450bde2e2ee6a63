// Package collysuite runs colly's own test suite with a robotsmw Guard
// attached to every collector and clone: attaching the Guard must not
// break what colly promises.
//
// Its test copies the source of the colly module this module requires
// (go list -m: v2.3.0 from go.mod, or the newest release in the copy
// scripts/colly-latest.sh makes) into a temporary module, renames colly's
// NewCollector and Clone so that wrappers of the same names attach a
// Guard{Rate: rate.Inf} to every collector (a clone gets its parent's
// Guard), and runs `go test` on the copy, with -race. Skipped are only
// three tests of colly's own robots.txt handling, which the Guard
// replaces by design (see skipped). The copy also renames colly's
// robots.txt check and adds a test that the Guard still answers that
// check without sending it (see envCheck): the Guard finds it by what its
// request carries, not by a function's name. It takes about 15 s, so it
// runs in `go test ./...` but not with -race (its run has -race itself)
// nor -short. The package has no other code.
package collysuite
