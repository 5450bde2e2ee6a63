// Package browsertest drives "robotstxt serve" in a real, headless Chromium
// (with chromedp) and checks the page as a person uses it: typing a
// robots.txt and URLs, the verdict table, the highlighted deciding line,
// lint markers, keyboard use.
//
// It is a module of its own so that chromedp and its dependencies never
// reach the robotsmw module or its users. Run it with
//
//	cd cmd/robotstxt/browsertest && go test ./...
//
// It needs Chromium (Debian: apt-get install chromium); without it the test
// is skipped, saying so, except when CI is set, where it fails. The test
// writes a screenshot of the page to $BROWSERTEST_SCREENSHOT, or to
// robotstxt-serve.png in the temporary directory, and logs where.
package browsertest
