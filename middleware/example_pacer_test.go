package robotsmw_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"time"

	"github.com/robotsmw/robotsmw/pace"

	"github.com/gocolly/colly/v2"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// Two collectors with Guards of their own share one pace.Memory: together
// they send the site no more than the Guards' Rate (here 20 requests per
// second), as one Guard would. Package redisstore does the same for
// Guards in many processes.
func ExampleGuard_sharedPacer() {
	var mu sync.Mutex
	var at []time.Time
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
		fmt.Fprint(w, "ok")
	}))
	defer site.Close()

	pacer := &pace.Memory{}
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		g := &robotsmw.Guard{Rate: 20, Pacer: pacer}
		c := colly.NewCollector(g.Attach, colly.Async())
		for j := 0; j < 5; j++ {
			c.Visit(fmt.Sprintf("%s/c%d/p%d", site.URL, i, j))
		}
		wg.Add(1)
		go func() { defer wg.Done(); c.Wait() }()
	}
	wg.Wait()

	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	span := at[len(at)-1].Sub(at[0])
	fmt.Println("requests:", len(at)) // each Guard fetched robots.txt once
	// The 11 gaps between them are 50ms or more (a connection's first
	// request may reach the server a little late).
	fmt.Println("spread over at least 11 × 50ms:", span >= 550*time.Millisecond-30*time.Millisecond)
	// Output:
	// requests: 12
	// spread over at least 11 × 50ms: true
}
