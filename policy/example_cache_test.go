package policy_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/robotsmw/robotsmw/policy"
)

func ExampleCache_Get() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	cache := &policy.Cache{UserAgent: "ExampleBot/1.0 (+https://example.org/bot)"}
	agent := policy.ProductToken(cache.UserAgent)
	for _, path := range []string{"/private/report", "/public/page"} {
		u, _ := url.Parse(srv.URL + path)
		e, err := cache.Get(context.Background(), u)
		var fe *policy.FetchError
		switch {
		case errors.As(err, &fe):
			fmt.Println(path, "robots.txt unreachable, retry at", e.RetryAt)
		case err != nil:
			fmt.Println(path, err)
		default:
			fmt.Println(path, e.State, e.Robots.Allowed(agent, u))
		}
	}
	// Output:
	// /private/report parsed false
	// /public/page parsed true
}
