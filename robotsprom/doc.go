// Package robotsprom exports the statistics of a robotsmw Guard to
// Prometheus, as a prometheus.Collector:
//
//	g := &robotsmw.Guard{}
//	c := colly.NewCollector(g.Attach)
//	prometheus.MustRegister(robotsprom.NewCollector(g))
//	http.Handle("/metrics", promhttp.Handler())
//
// or, for a collector made with colly.NewCollector(robotsmw.Attach()),
// robotsprom.NewCollector(robotsmw.GuardOf(c)).
//
// Each scrape takes one Guard.Stats snapshot (it scans the kept hosts:
// about 90 ns each) and exports, with the prefix robotsmw_:
//
//	requests_sent_total        counter    requests sent to hosts: pages, retries,
//	                                      redirect hops, robots.txt, sitemaps
//	pages_fetched_total        counter    pages fetched (colly responses read)
//	outcomes_total{outcome}    counter    blocked, deferred, retried, gave_up,
//	                                      not_followed
//	backoffs_total             counter    pauses started or lengthened
//	hosts_evicted_total        counter    host states forgotten when quiet
//	hosts                      gauge      host states kept
//	hosts_paused               gauge      hosts paused now
//	requests_in_flight         gauge      requests sent, response not arrived
//	requests_waiting           gauge      deferred requests waiting in the Guard
//	wait_seconds               histogram  waits inside colly's callbacks
//	                                      before sending (1 ms to 1 min)
//
// There are no per-host series: a broad crawl meets millions of hosts,
// and a label per host would grow the series without bound. Read
// Guard.Stats().Busiest or Guard.Host for them.
//
// This is a module of its own (github.com/robotsmw/robotsmw/robotsprom),
// so that the robotsmw module does not require client_golang; the names
// and help texts come from the robotsmw module (its internal promtext
// package, which its examples serve without client_golang), so both
// expose the same series.
package robotsprom
