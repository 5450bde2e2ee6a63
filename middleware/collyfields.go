package robotsmw

import (
	"net/http"
	"reflect"
	"sync"
	"unsafe"

	"github.com/gocolly/colly/v2"
)

// colly v2.3.0 offers no getters for three things the Guard needs: the HTTP
// client (to wrap its transport and read its timeout), the WaitGroup
// behind Collector.Wait (to keep Wait from returning while a deferred
// request waits in the Guard's queue), and the OnError callbacks (to report
// a deferred request colly refused to send again: refused.go). Both are read from unexported fields
// by reflection, their types checked first, and only read: the client is
// changed through colly's own methods, and the WaitGroup is only added to
// and marked done, as colly itself does. If a field cannot be read (a
// colly version that renamed it), the accessor returns nil and the Guard
// does without: see the callers.

// collyFields are the indices of the fields the accessors read, found once
// by name (a pure function of colly's types, so it is computed once per
// process); ok is false if colly's types do not have them.
var collyFields = sync.OnceValue(func() (f struct {
	backend, client, wg, onError []int
	// backendAt and clientAt are the offsets of backend in a Collector and
	// of Client in the backend, when both are fields of their own structs
	// (direct): collyClient, which runs for every request, then reads them
	// without reflection.
	backendAt, clientAt uintptr
	direct              bool
	ok                  bool
}) {
	ct := reflect.TypeFor[colly.Collector]()
	b, ok := ct.FieldByName("backend")
	if !ok || b.Type.Kind() != reflect.Pointer || b.Type.Elem().Kind() != reflect.Struct {
		return f
	}
	cl, ok := b.Type.Elem().FieldByName("Client")
	if !ok || cl.Type != reflect.TypeFor[*http.Client]() {
		return f
	}
	wg, ok := ct.FieldByName("wg")
	if !ok || wg.Type != reflect.TypeFor[*sync.WaitGroup]() {
		return f
	}
	oe, ok := ct.FieldByName("errorCallbacks")
	if !ok || oe.Type != reflect.TypeFor[[]colly.ErrorCallback]() {
		return f
	}
	f.backend, f.client, f.wg, f.onError, f.ok = b.Index, cl.Index, wg.Index, oe.Index, true
	f.backendAt, f.clientAt, f.direct = b.Offset, cl.Offset, len(b.Index) == 1 && len(cl.Index) == 1
	return f
})

// collyClient returns the *http.Client c sends its requests with, or nil
// if it cannot be read.
func collyClient(c *colly.Collector) *http.Client {
	f := collyFields()
	if !f.ok {
		return nil
	}
	if f.direct {
		// The types were checked by collyFields: backend is a pointer,
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

// collyWaitGroup returns the WaitGroup that c.Wait waits for, or nil if it
// cannot be read.
func collyWaitGroup(c *colly.Collector) *sync.WaitGroup {
	f := collyFields()
	if !f.ok {
		return nil
	}
	v := reflect.ValueOf(c).Elem().FieldByIndex(f.wg)
	if v.IsNil() {
		return nil
	}
	return (*sync.WaitGroup)(v.UnsafePointer())
}

// collyErrorCallbacks returns the OnError callbacks of c, or nil if they
// cannot be read. The slice is colly's: only read.
func collyErrorCallbacks(c *colly.Collector) []colly.ErrorCallback {
	f := collyFields()
	if !f.ok {
		return nil
	}
	v := reflect.ValueOf(c).Elem().FieldByIndex(f.onError)
	return *(*[]colly.ErrorCallback)(v.Addr().UnsafePointer())
}
