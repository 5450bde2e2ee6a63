package robotsmw

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gocolly/colly/v2"
)

// colly v2.3.0 offers no getters for four things the Guard needs, so this
// file, and only this file, reads them from colly's unexported fields:
//
//   - the HTTP client (Collector.backend.Client), to wrap the transport a
//     user installed before Attach and to take its request timeout over
//     (timeouts.go); the Guard changes the client only through colly's
//     own WithTransport and SetRequestTimeout;
//   - the WaitGroup behind Collector.Wait (Collector.wg), so that Wait
//     does not return while a deferred request waits in the Guard
//     (outcome.go); it is only added to and marked done, as colly does;
//   - the OnError callbacks (Collector.errorCallbacks), to report the
//     final outcome of a deferred request colly refused to send again
//     (outcome.go), and each failed attempt of a synchronous collector's
//     request retried in place (inplace.go); only read;
//   - the request counter behind MaxRequests (Collector.requestCount),
//     so that an attempt a synchronous collector's request is sent again
//     in place counts against MaxRequests as a Request.Retry does
//     (inplace.go); only read and added to, as colly does.
//
// See colly's source: https://github.com/gocolly/colly/blob/v2.3.0/colly.go
// and http_backend.go. Each field's name and type is checked once per
// process; when one is missing (a colly release that renamed it), Attach
// panics with an error naming the colly version and the missing field
// rather than run a Guard that would silently lose pages. CI runs the
// suite against the newest colly v2 release too (scripts/colly-latest.sh).

// errColly is wrapped by the complaint of collyCheck.
var errColly = errors.New("robotsmw: this colly version is not supported")

// collyLayout holds where the fields are in colly's types.
type collyLayout struct {
	backend, client, wg, onError, requests []int
	// backendAt and clientAt are the offsets of backend in a Collector and
	// of Client in the backend, when both are fields of their own structs
	// (direct): collyClient, which runs for every request, then reads them
	// without reflection.
	backendAt, clientAt uintptr
	direct              bool
	err                 error // what is missing; nil if every field is there
}

// collyFields is the layout of colly.Collector, found once (a pure
// function of colly's types).
// A pointer: collyClient reads it for every request, and a copy of the
// layout per call would cost more than the read.
var collyFields = sync.OnceValue(func() *collyLayout {
	l := layoutOf(reflect.TypeFor[colly.Collector](), collyVersion())
	return &l
})

// layoutOf finds the fields in ct, a colly.Collector type of colly
// version; its err names every field that is missing or of another type.
func layoutOf(ct reflect.Type, version string) collyLayout {
	var l collyLayout
	var missing []string
	field := func(t reflect.Type, name string, want reflect.Type, wantKind reflect.Kind) (reflect.StructField, bool) {
		f, ok := t.FieldByName(name)
		switch {
		case ok && want != nil && f.Type == want, ok && want == nil && f.Type.Kind() == wantKind && f.Type.Elem().Kind() == reflect.Struct:
			return f, true
		}
		what := want
		if what == nil {
			what = reflect.PointerTo(reflect.TypeFor[struct{}]())
		}
		missing = append(missing, fmt.Sprintf("%s.%s (%v)", t, name, what))
		return f, false
	}
	b, okB := field(ct, "backend", nil, reflect.Pointer)
	if okB {
		if cl, ok := field(b.Type.Elem(), "Client", reflect.TypeFor[*http.Client](), 0); ok {
			l.backend, l.client = b.Index, cl.Index
			l.backendAt, l.clientAt, l.direct = b.Offset, cl.Offset, len(b.Index) == 1 && len(cl.Index) == 1
		}
	}
	if wg, ok := field(ct, "wg", reflect.TypeFor[*sync.WaitGroup](), 0); ok {
		l.wg = wg.Index
	}
	if oe, ok := field(ct, "errorCallbacks", reflect.TypeFor[[]colly.ErrorCallback](), 0); ok {
		l.onError = oe.Index
	}
	if rc, ok := field(ct, "requestCount", reflect.TypeFor[atomic.Uint32](), 0); ok {
		l.requests = rc.Index
	}
	if len(missing) > 0 {
		l.err = fmt.Errorf("%w: colly %s has no field %s; robotsmw reads it for want of a public getter (supported: colly v2.3.0)",
			errColly, version, strings.Join(missing, ", no field "))
	}
	return l
}

// collyVersion returns the version of the colly module linked in, as the
// build records it, or "(version unknown)".
func collyVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/gocolly/colly/v2" {
				if m.Replace != nil {
					return m.Version + " (replaced by " + m.Replace.Path + " " + m.Replace.Version + ")"
				}
				return m.Version
			}
		}
	}
	return "(version unknown)"
}

// collyCheck returns nil if the Guard can read what it needs of colly's
// collectors, else an error naming the colly version and what is missing.
func collyCheck() error { return collyFields().err }

// collyClient returns the *http.Client c sends its requests with, or nil
// if c has none (or the fields are missing: Attach refused such a colly).
func collyClient(c *colly.Collector) *http.Client {
	f := collyFields()
	if f.err != nil {
		return nil
	}
	if f.direct {
		// The types were checked by layoutOf: backend is a pointer,
		// Client a *http.Client.
		backend := *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(c), f.backendAt))
		if backend == nil {
			return nil
		}
		return *(**http.Client)(unsafe.Add(backend, f.clientAt))
	}
	v := reflect.ValueOf(c).Elem().FieldByIndex(f.backend)
	if v.IsNil() {
		return nil
	}
	v = v.Elem().FieldByIndex(f.client)
	if v.IsNil() {
		return nil
	}
	return (*http.Client)(v.UnsafePointer())
}

// collyWaitGroup returns the WaitGroup that c.Wait waits for, or nil.
func collyWaitGroup(c *colly.Collector) *sync.WaitGroup {
	f := collyFields()
	if f.err != nil {
		return nil
	}
	v := reflect.ValueOf(c).Elem().FieldByIndex(f.wg)
	if v.IsNil() {
		return nil
	}
	return (*sync.WaitGroup)(v.UnsafePointer())
}

// collyErrorCallbacks returns the OnError callbacks of c, or nil. The
// slice is colly's: only read.
func collyErrorCallbacks(c *colly.Collector) []colly.ErrorCallback {
	f := collyFields()
	if f.err != nil {
		return nil
	}
	v := reflect.ValueOf(c).Elem().FieldByIndex(f.onError)
	return *(*[]colly.ErrorCallback)(v.Addr().UnsafePointer())
}

// collyRequestCount returns the counter of the requests c made, which
// MaxRequests bounds, or nil.
func collyRequestCount(c *colly.Collector) *atomic.Uint32 {
	f := collyFields()
	if f.err != nil {
		return nil
	}
	v := reflect.ValueOf(c).Elem().FieldByIndex(f.requests)
	return (*atomic.Uint32)(v.Addr().UnsafePointer())
}
