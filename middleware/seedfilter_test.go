package robotsmw

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/sitemap"
)

// TestSeedFilterAndSizes: Seeding passes the Walker's per-entry Filter
// (an index child dropped by its lastmod, a page rewritten), its
// Sitemaps naming a robots.txt, and its MaxSize and WarnSize (the large
// sitemap logged to Guard.Logger and counted, the one past MaxSize cut).
func TestSeedFilterAndSizes(t *testing.T) {
	s := sitemapSite(t, "Sitemap: /index.xml\n", map[string]string{
		"/index.xml": `<sitemapindex>
<sitemap><loc>/old.xml</loc><lastmod>2004-01-01</lastmod></sitemap>
<sitemap><loc>/new.xml</loc><lastmod>2025-01-01</lastmod></sitemap>
<sitemap><loc>/huge.xml</loc></sitemap>
</sitemapindex>`,
		"/old.xml":  urlsetXML("/p/old"),
		"/new.xml":  urlsetXML(append([]string{"/p/draft"}, pagePaths(100)...)...),
		"/huge.xml": urlsetXML(pagePaths(1000)...),
	}, nil)
	var log bytes.Buffer
	g := &Guard{Rate: rate.Inf, Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Seeding: Seeding{Options: sitemap.Options{
			Sitemaps: []string{"/robots.txt"},
			Filter: func(e sitemap.Entry) (sitemap.Entry, bool) {
				if e.Index {
					return e, e.LastMod.IsZero() || e.LastMod.Year() > 2004
				}
				if strings.HasSuffix(e.Loc, "/p/draft") {
					e.Loc = "/p/published"
				}
				return e, true
			},
			MaxSize:  20_000,
			WarnSize: 2_000,
		}}}
	c := colly.NewCollector(g.Attach)
	st, err := g.Seed(c, s.URL)
	if !errors.Is(err, sitemap.ErrTooLarge) || st.Cut&sitemap.CutSize == 0 {
		t.Errorf("Seed err = %v, Cut %v; want /huge.xml cut at MaxSize", err, st.Cut)
	}
	got := pagesVisited(t, s)
	if !slices.Contains(got, "/p/published") || slices.Contains(got, "/p/draft") || slices.Contains(got, "/p/old") {
		t.Errorf("Seed visited %q; want /p/published, not /p/draft nor /p/old", got)
	}
	if st.Skipped.Filter != 1 || st.Large != 2 {
		t.Errorf("Seed stats = %+v; want 1 index child skipped by the Filter, 2 large sitemaps", st)
	}
	if !strings.Contains(log.String(), `msg="sitemap large"`) || !strings.Contains(log.String(), "warn_size=2000") {
		t.Errorf("Guard.Logger wrote\n%s\nwant a \"sitemap large\" warning", log.String())
	}
}
