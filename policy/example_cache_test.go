package policy_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"time"

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

func ExampleRetryAfter() {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, h := range []http.Header{
		{"Retry-After": {"120"}},
		// The server's clock is an hour behind: the date is measured
		// against its Date field, so the wait is 2 minutes, not none.
		{"Retry-After": {"Sat, 01 Mar 2025 11:02:00 GMT"}, "Date": {"Sat, 01 Mar 2025 11:00:00 GMT"}},
		{"Retry-After": {"0"}},
		{"Retry-After": {"soon"}},
	} {
		d, ok := policy.RetryAfter(h, now)
		fmt.Println(h.Get("Retry-After"), "->", d, ok)
	}
	// Output:
	// 120 -> 2m0s true
	// Sat, 01 Mar 2025 11:02:00 GMT -> 2m0s true
	// 0 -> 0s false
	// soon -> 0s false
}
