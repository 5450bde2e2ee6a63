package sitemap

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"testing"
)

// TestWalkLogger: each sitemap read, failed or disallowed is logged, at
// Info, Warn and Debug, and each page robots.txt disallows at Debug, with
// its rule; the Walker's own robots.txt cache logs to the same Logger.
func TestWalkLogger(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt":     {body: "User-agent: *\nDisallow: /private/\nSitemap: /index.xml\nSitemap: /private/sm.xml\n"},
		"/index.xml":      {body: indexOf("/ok.xml", "/gone.xml")},
		"/ok.xml":         {body: urlsetOf("/a", "/b", "/private/p")},
		"/private/sm.xml": {body: urlsetOf("/x")},
	})
	var buf bytes.Buffer
	w := &Walker{Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			switch a.Key {
			case slog.TimeKey, "expires":
				return slog.Attr{}
			}
			return a
		},
	}))}
	walkSite(t, w, s)
	got := strings.Split(strings.TrimSpace(strings.ReplaceAll(buf.String(), s.srv.URL, "H")), "\n")
	slices.Sort(got)
	want := []string{
		`level=DEBUG msg="page disallowed" url=H/private/p sitemap=H/ok.xml agent=* group=* line=2 rule="disallow: /private/"`,
		`level=DEBUG msg="sitemap disallowed" url=H/private/sm.xml depth=0`,
		`level=INFO msg="robots.txt fetched" origin=H status=200 state=parsed`,
		`level=INFO msg="sitemap read" url=H/index.xml depth=0 children=2`,
		`level=INFO msg="sitemap read" url=H/ok.xml depth=1 pages=2`,
		`level=WARN msg="sitemap failed" url=H/gone.xml depth=1 pages=0 error="sitemap: H/gone.xml: status 404"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("Walker.Logger got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
