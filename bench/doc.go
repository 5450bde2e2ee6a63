// Package bench measures robotsmw against its peers on the shared real-world
// corpus, in one run on one machine. It is a separate module so that peers
// never become dependencies of the library.
//
//	go test -bench . -benchmem                        # Go benchmarks, one per engine and task
//	go test -run XXX -bench BroadHosts -benchtime 1x  # a broad crawl: 100,000 hosts, one page each
//	go run ./compare                                  # the comparison table printed in the README
//	go run ./slowweb                                  # "a slow web": politeness judged at the server
package bench
