package robotsmw

import (
	"github.com/gocolly/colly/v2"

	"github.com/robotsmw/robotsmw/sitemap"
)

// Keys of the Ctx of a request Guard.Seed made for a page of a sitemap.
// Route pages to handlers by them, as Scrapy's sitemap_rules do:
//
//	g.Seeding.Rules = []sitemap.Rule{{Pattern: "/product/", Tag: "product"}}
//	c.OnHTML("h1", func(e *colly.HTMLElement) {
//		if e.Request.Ctx.Get(robotsmw.SitemapTagKey) == "product" { … }
//	})
//
// A redirect keeps them, and so do the links a page's callbacks visit with
// e.Request.Visit, which shares the page's Ctx (colly passes it on); a link
// visited with c.Visit gets a Ctx of its own, without them.
const (
	// SitemapTagKey holds the Tag of the Seeding.Rules rule that matched
	// the page (sitemap.Entry.Tag); absent without Rules.
	SitemapTagKey = "robotsmw.sitemap.tag"
	// SitemapAlternateOfKey holds, for an hreflang alternate seeded with
	// Seeding.Alternates, the page that listed it (sitemap.Entry.AlternateOf).
	SitemapAlternateOfKey = "robotsmw.sitemap.alternate-of"
)

// seedContext returns ctx (a new one if nil and one is needed) holding
// what the walk found about the page e; nil when there is nothing to hold
// and ctx is nil, for colly to make its own.
func seedContext(ctx *colly.Context, e sitemap.Entry) *colly.Context {
	if e.Tag == "" && e.AlternateOf == "" {
		return ctx
	}
	if ctx == nil {
		ctx = colly.NewContext()
	}
	if e.Tag != "" {
		ctx.Put(SitemapTagKey, e.Tag)
	}
	if e.AlternateOf != "" {
		ctx.Put(SitemapAlternateOfKey, e.AlternateOf)
	}
	return ctx
}
