package robotsmw_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// With CleanParams, URLs that differ only in the parameters a Clean-param
// line names are fetched once; the others end with ErrDuplicate.
func ExampleGuard_cleanParams() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow:\nClean-param: ref&utm_source /shop/\n")
			return
		}
		fmt.Fprint(w, "<html><body>a product</body></html>")
	}))
	defer site.Close()

	g := &robotsmw.Guard{Rate: rate.Inf, CleanParams: true}
	c := colly.NewCollector(g.Attach)
	c.OnResponse(func(r *colly.Response) { fmt.Println("fetched", r.Request.URL.RequestURI()) })
	for _, p := range []string{"/shop/item?id=7&ref=mail", "/shop/item?utm_source=ad&id=7", "/shop/item?id=8"} {
		if err := c.Visit(site.URL + p); errors.Is(err, robotsmw.ErrDuplicate) {
			fmt.Println("not sent", p)
		}
	}
	// Output:
	// fetched /shop/item?id=7&ref=mail
	// not sent /shop/item?utm_source=ad&id=7
	// fetched /shop/item?id=8
}
