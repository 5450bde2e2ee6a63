package sitemap_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/robotsmw/robotsmw/sitemap"
)

// A walk as Scrapy's SitemapSpider does it: from a given sitemap index,
// following only the product sitemaps, tagging pages by rules, with the
// pages' hreflang alternates.
func ExampleRule() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /checkout/\n")
		case "/sitemap_index.xml":
			fmt.Fprint(w, `<sitemapindex><sitemap><loc>/sitemap_products.xml</loc></sitemap>
<sitemap><loc>/sitemap_blog.xml</loc></sitemap></sitemapindex>`)
		case "/sitemap_products.xml":
			fmt.Fprint(w, `<urlset xmlns:xhtml="http://www.w3.org/1999/xhtml">
<url><loc>/product/1</loc><xhtml:link rel="alternate" hreflang="de" href="/de/product/1"/></url>
<url><loc>/category/shoes</loc></url><url><loc>/about</loc></url></urlset>`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()

	w := &sitemap.Walker{Options: sitemap.Options{
		Sitemaps: []string{"/sitemap_index.xml"},
		Follow:   []string{"/sitemap_products"},
		Rules: []sitemap.Rule{
			{Pattern: "/product/", Tag: "product"},
			{Pattern: "/de/product/", Tag: "product"},
			{Pattern: "/category/", Tag: "category"},
		},
		Alternates: true,
	}}
	st, err := w.Walk(context.Background(), site.URL, func(e sitemap.Entry) error {
		fmt.Println(strings.TrimPrefix(e.Loc, site.URL), e.Tag)
		return nil
	})
	fmt.Printf("err %v; read %d; children not followed %d; pages no rule matched %d\n",
		err, st.Sitemaps, st.Skipped.Filter, st.Dropped.Filter)
	// Output:
	// /product/1 product
	// /de/product/1 product
	// /category/shoes category
	// err <nil>; read 2; children not followed 1; pages no rule matched 1
}
