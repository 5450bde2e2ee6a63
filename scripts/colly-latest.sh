#!/usr/bin/env bash
# colly-latest.sh: colly's own test suite with a Guard attached
# (internal/collysuite) and the middleware tests, against the newest colly
# v2 release the Go module proxy serves rather than the version go.mod
# requires, so that a colly release that breaks the Guard fails here before
# a user finds it. It works in a copy of the module outside the checkout
# (the tracked and untracked, not ignored, files), which it removes; the
# checkout's go.mod and go.sum are not touched. Any failure, including a go
# get that cannot reach the proxy, exits non-zero. A version as argument
# (v2.2.0, say) tests that one instead of @latest.
#
#	scripts/colly-latest.sh [version]
set -euo pipefail
want=${1:-latest}
cd "$(dirname "$0")/.."
start=$(date +%s)

copy=$(mktemp -d "${TMPDIR:-/tmp}/robotsmw-colly-latest.XXXXXX")
# The module cache is read-only: the copy may hold files from it.
trap 'chmod -R u+w "$copy" 2>/dev/null || true; rm -rf "$copy"' EXIT
git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
	tar --null -T - -cf - | tar -xf - -C "$copy"
cd "$copy"
export GOWORK=off

required=$(go list -m -f '{{.Version}}' github.com/gocolly/colly/v2)
go get "github.com/gocolly/colly/v2@$want"
go mod tidy
tested=$(go list -m -f '{{.Version}}' github.com/gocolly/colly/v2)
echo "== colly $tested (@$want; go.mod requires $required)"
if [ "$tested" = "$required" ] && [ "${COLLY_LATEST_ALWAYS:-}" = "" ]; then
	# The newest release is the one go.mod requires: scripts/test-all
	# (with and without -race) has run colly's suite with the Guard and
	# the middleware tests on it already. COLLY_LATEST_ALWAYS=1 runs them
	# here all the same.
	echo "== colly $tested is go.mod's: tested by scripts/test-all"
	exit 0
fi

go vet ./middleware/... ./internal/collysuite/
# The suite's test runs colly's tests itself, with -race, on the colly the
# copy now requires; it skips itself under -race and -short.
go test -count=1 -v -run '^TestCollySuiteWithGuard$' ./internal/collysuite/
go test -race -count=1 ./middleware/...

echo "== colly $tested: colly's suite with the Guard and the middleware tests passed ($(($(date +%s) - start)) s)"
