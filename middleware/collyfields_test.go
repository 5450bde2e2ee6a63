//lint:file-ignore U1000 the fake collectors' fields are read by reflection only

package robotsmw

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gocolly/colly/v2"
)

// The colly this module requires has every field the Guard reads.
func TestCollyLayout(t *testing.T) {
	if err := collyCheck(); err != nil {
		t.Fatalf("collyCheck() = %v, want nil for the colly in go.mod", err)
	}
	// The request counter is the one MaxRequests bounds: colly's own
	// refusal follows what is added to it.
	c := colly.NewCollector(colly.MaxRequests(2))
	n := collyRequestCount(c)
	if n == nil || n.Load() != 0 {
		t.Fatalf("collyRequestCount(new collector) = %v, want a counter at 0", n)
	}
	n.Add(2)
	if err := c.Visit("http://127.0.0.1:1/"); !errors.Is(err, colly.ErrMaxRequests) {
		t.Errorf("Visit after 2 counted requests with MaxRequests(2) = %v, want colly.ErrMaxRequests", err)
	}
}

// A colly whose Collector lacks a field, or has it with another type,
// is refused with an error naming the version and each missing field.
func TestCollyLayoutMissing(t *testing.T) {
	type backend struct{ Client *http.Client }
	type renamed struct {
		backend        *backend
		waitGroup      *sync.WaitGroup // renamed from wg
		errorCallbacks []colly.ErrorCallback
		requestCount   atomic.Uint32
	}
	type retyped struct {
		backend        *struct{ Client http.RoundTripper }
		wg             sync.WaitGroup
		errorCallbacks []colly.ErrorCallback
		requestCount   uint32 // an atomic.Uint32 in v2.3.0
	}
	type uncounted struct { // no request counter
		backend        *backend
		wg             *sync.WaitGroup
		errorCallbacks []colly.ErrorCallback
	}
	for _, tc := range []struct {
		typ  reflect.Type
		want []string
	}{
		{reflect.TypeFor[renamed](), []string{"v9.9.9", "no field robotsmw.renamed.wg (*sync.WaitGroup)"}},
		{reflect.TypeFor[retyped](), []string{"Client (*http.Client)", "wg (*sync.WaitGroup)", "requestCount (atomic.Uint32)"}},
		{reflect.TypeFor[uncounted](), []string{"v9.9.9", "no field robotsmw.uncounted.requestCount (atomic.Uint32)"}},
	} {
		l := layoutOf(tc.typ, "v9.9.9")
		if !errors.Is(l.err, errColly) {
			t.Errorf("layoutOf(%v) error = %v, want errColly", tc.typ, l.err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(l.err.Error(), w) {
				t.Errorf("layoutOf(%v) error = %q, want it to name %q", tc.typ, l.err, w)
			}
		}
	}
}
