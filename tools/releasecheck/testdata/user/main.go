// A user's program, built by releasecheck in a module of its own outside the
// checkout: a Guard on a colly collector, its Stats registered with a real
// Prometheus registry and served over HTTP, one page fetched and one refused
// by robots.txt on a loopback site, then its own /metrics scraped and printed.
package main

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"

	"github.com/gocolly/colly/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/time/rate"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
	"github.com/robotsmw/robotsmw/robotsprom"
)

func main() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		fmt.Fprint(w, "<html><body>hello</body></html>")
	}))
	defer site.Close()

	g := &robotsmw.Guard{Rate: rate.Inf}
	c := colly.NewCollector(g.Attach)
	reg := prometheus.NewRegistry()
	reg.MustRegister(robotsprom.NewCollector(g))
	c.Visit(site.URL + "/")
	c.Visit(site.URL + "/private/page")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}
	go srv.Serve(ln)
	defer srv.Close()

	resp, err := http.Get("http://" + ln.Addr().String() + "/metrics")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		log.Fatalf("scrape: %s, %v", resp.Status, err)
	}
	fmt.Printf("\n%s", body)
}
