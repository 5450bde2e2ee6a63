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
//	final_outcomes_total{outcome}
//	                           counter    each request once, at its end: fetched
//	                                      (= pages_fetched_total), blocked, gave_up
//	attempt_outcomes_total{outcome}
//	                           counter    attempts that were not the end: deferred,
//	                                      retried
//	links_not_followed_total   counter    nofollow links FollowLinks left out
//	robots_fetches_total{result}
//	                           counter    robots.txt fetches of the Guard's own
//	                                      cache: parsed, allow_all, unreachable_429,
//	                                      unreachable_5xx, unreachable_timeout,
//	                                      unreachable_network
//	robots_unreachable_origins gauge      origins whose robots.txt is down now
//	backoffs_total             counter    pauses started or lengthened
//	hosts_evicted_total        counter    host states forgotten when quiet
//	hosts                      gauge      host states kept
//	hosts_paused               gauge      hosts paused now
//	requests_in_flight         gauge      requests sent, response not arrived
//	requests_waiting           gauge      deferred requests waiting in the Guard
//	wait_seconds               histogram  waits inside colly's callbacks
//	                                      before sending (1 ms to 1 min)
//
// sum(final_outcomes_total) counts the requests that ended (colly's own
// refusals, such as a URL filter, aside); attempt_outcomes_total counts
// what happened on the way, so a request retried twice and then fetched
// adds 2 there and 1 to fetched.
//
// There are no per-host series: a broad crawl meets millions of hosts,
// and a label per host would grow the series without bound. Read
// Guard.Stats().Busiest for them.
//
// This is a module of its own (github.com/robotsmw/robotsmw/robotsprom),
// so that the robotsmw module does not require client_golang; the names
// and help texts come from the robotsmw module (its internal promtext
// package, which its examples serve without client_golang), so both
// expose the same series.
package robotsprom
