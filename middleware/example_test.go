package robotsmw_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

func ExampleAttach() {
	c := colly.NewCollector(robotsmw.Attach())
	c.OnResponse(func(r *colly.Response) { fmt.Println(r.Request.URL) })
	c.Visit("https://example.com/")
}

func ExampleGuard() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n\nUser-agent: examplebot\nDisallow: /drafts\n")
		case "/old":
			http.Redirect(w, r, "/drafts/1", http.StatusMovedPermanently)
		default:
			fmt.Fprint(w, "<html><body>hello</body></html>")
		}
	}))
	defer site.Close()

	g := &robotsmw.Guard{
		Agent: "ExampleBot",
		Rate:  rate.Every(50 * time.Millisecond),
		ErrorHandler: func(r *colly.Request, err error) {
			var de *robotsmw.DisallowedError
			if errors.As(err, &de) {
				fmt.Printf("blocked %s: %s\n", de.URL.Path, de.Decision)
			}
		},
	}
	c := colly.NewCollector(colly.UserAgent("ExampleBot/1.0 (+https://example.org/bot)"), g.Attach)
	c.OnResponse(func(r *colly.Response) { fmt.Println("fetched", r.Request.URL.Path) })

	c.Visit(site.URL + "/")
	c.Visit(site.URL + "/private") // the examplebot group does not disallow it
	c.Visit(site.URL + "/drafts/2")
	c.Visit(site.URL + "/old") // redirects into /drafts: the hop is not requested

	st := g.Stats().Total
	fmt.Printf("fetched %d (robots.txt included), blocked %d\n", st.Fetched, st.Blocked)
	// Output:
	// fetched /
	// fetched /private
	// blocked /drafts/2: disallowed by line 5: disallow: /drafts (group "examplebot")
	// blocked /drafts/1: disallowed by line 5: disallow: /drafts (group "examplebot")
	// fetched 4 (robots.txt included), blocked 2
}
