package robotsprom_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/gocolly/colly/v2"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
	"github.com/robotsmw/robotsmw/robotsprom"
)

// A crawl's Guard registered with a Prometheus registry; a real program
// serves the registry with promhttp.HandlerFor on /metrics.
func ExampleNewCollector() {
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

	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			switch {
			case mf.GetName() == "robotsmw_final_outcomes_total":
				fmt.Println(m.GetLabel()[0].GetValue(), m.GetCounter().GetValue())
			case mf.GetName() == "robotsmw_robots_fetches_total" && m.GetCounter().GetValue() > 0:
				fmt.Println("robots.txt", m.GetLabel()[0].GetValue(), m.GetCounter().GetValue())
			case mf.GetName() == "robotsmw_requests_sent_total":
				fmt.Println("requests sent", m.GetCounter().GetValue())
			}
		}
	}
	// Output:
	// blocked 1
	// fetched 1
	// gave_up 0
	// requests sent 2
	// robots.txt parsed 1
}
