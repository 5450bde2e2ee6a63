package netguard_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/robotsmw/robotsmw/netguard"
)

// A client whose transport dials through the guard cannot reach a server on
// the machine it runs on — here a test server on 127.0.0.1, standing in for
// a sitemap line that names http://127.0.0.1:6379/ or a cloud metadata
// address.
func Example() {
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println("never reached")
	}))
	defer internal.Close()

	client := &http.Client{Transport: netguard.Transport(nil)}
	_, err := client.Get(internal.URL + "/admin")
	var ae *netguard.AddressError
	fmt.Println(errors.Is(err, netguard.ErrForbidden), errors.As(err, &ae) && ae.Reason == "loopback")
	// Output: true true
}
