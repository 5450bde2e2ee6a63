package robotsmw

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/internal/privatetest"
	"github.com/robotsmw/robotsmw/netguard"
	"github.com/robotsmw/robotsmw/sitemap"
)

// The site's robots.txt names a sitemap on another host
// (an internal service, here another loopback port), which lists its own
// pages. Seed reads it for the site's pages only: nothing of the other
// host is queued or fetched but the sitemap itself.
func TestSeedOnlyTheSitesPages(t *testing.T) {
	internal := sitemapSite(t, "", map[string]string{
		"/s.txt": "{{host}}/admin/delete?all=1\n{{host}}/v1/kv/secret\n",
	}, nil)
	s := sitemapSite(t, "Sitemap: "+internal.URL+"/s.txt\nSitemap: /own.txt\n", map[string]string{
		"/own.txt": "{{host}}/p/mine\n",
	}, nil)
	g := &Guard{Rate: rate.Inf}
	c := colly.NewCollector(g.Attach)
	st, err := g.Seed(c, s.URL)
	if err != nil {
		t.Fatalf("Seed: %v", err)
	}
	if got := pagesVisited(t, s); !slices.Equal(got, []string{"/p/mine"}) {
		t.Errorf("Seed visited %q on the site, want [/p/mine]", got)
	}
	for _, h := range internal.log() {
		if h.path != "/s.txt" && h.path != "/robots.txt" {
			t.Errorf("Seed fetched %s on the host the sitemap is on", h.path)
		}
	}
	if st.Queued != 1 || st.Dropped.Scope != 2 {
		t.Errorf("Seed stats: Queued %d, Dropped.Scope %d; want 1 and 2", st.Queued, st.Dropped.Scope)
	}
}

// Seed reports the bounds that cut its walk.
func TestSeedReportsCuts(t *testing.T) {
	s := sitemapSite(t, "Sitemap: /a.txt\n", map[string]string{
		"/a.txt": "{{host}}/p/1\n{{host}}/p/2\n{{host}}/p/3\n",
	}, nil)
	g := &Guard{Rate: rate.Inf}
	g.Seeding.MaxURLs = 2
	c := colly.NewCollector(g.Attach)
	st, _ := g.Seed(c, s.URL)
	if st.Queued != 2 || st.Cut != sitemap.CutURLs || st.Dropped.Limit != 1 {
		t.Errorf("Seed with MaxURLs 2: Queued %d, Cut %q, Dropped.Limit %d; want 2, urls, 1", st.Queued, st.Cut, st.Dropped.Limit)
	}
}

// With netguard's transport installed before Attach, the
// Guard's own robots.txt and sitemap fetches go through it too: a sitemap
// on another loopback address, standing in for an internal service, is
// never connected to; without it, it is read (for the site's pages only).
func TestSeedThroughNetguard(t *testing.T) {
	inner := privatetest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "http://127.0.0.2/admin/delete?all=1")
	}))
	s := sitemapSite(t, "Sitemap: "+inner.URL+"/s.txt\nSitemap: /own.txt\n", map[string]string{
		"/own.txt": "{{host}}/p/mine\n",
	}, nil)
	for _, guarded := range []bool{true, false} {
		inner.Reset()
		g := &Guard{Rate: rate.Inf}
		c := colly.NewCollector()
		if guarded {
			tr, err := netguard.SiteTransport(context.Background(), s.URL)
			if err != nil {
				t.Fatal(err)
			}
			c.WithTransport(tr) // before Attach
		}
		g.Attach(c)
		st, err := g.Seed(c, s.URL)
		if st.Queued != 1 {
			t.Errorf("guarded=%v: Seed queued %d pages, want 1 (%v)", guarded, st.Queued, err)
		}
		if got := inner.Conns() > 0; got == guarded {
			t.Errorf("guarded=%v: the internal server accepted %d connections", guarded, inner.Conns())
		}
		if guarded && !errors.Is(err, netguard.ErrForbidden) {
			t.Errorf("guarded: Seed = %v, want the refused sitemap reported (netguard.ErrForbidden)", err)
		}
	}
}
