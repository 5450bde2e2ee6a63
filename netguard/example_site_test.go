package netguard_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"

	"github.com/robotsmw/robotsmw/netguard"
)

// A crawl of a site on this machine (a test server on 127.0.0.1) reaches
// the site, and no other non-public address its pages or sitemaps name:
// not the metadata service, and not another port of the site's own
// address.
func ExampleSiteTransport() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer site.Close()
	other, err := net.Listen("tcp", "127.0.0.1:0") // another service of 127.0.0.1
	if err != nil {
		fmt.Println(err)
		return
	}
	defer other.Close()

	tr, err := netguard.SiteTransport(context.Background(), site.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	resp, err := client.Get(site.URL + "/")
	if err == nil {
		resp.Body.Close()
	}
	fmt.Println("the site:", err == nil)
	_, err = client.Get("http://169.254.169.254/latest/meta-data/")
	fmt.Println("the metadata service:", errors.Is(err, netguard.ErrForbidden))
	_, err = client.Get("http://" + other.Addr().String() + "/")
	fmt.Println("another port of the site's address:", errors.Is(err, netguard.ErrForbidden))
	// Output:
	// the site: true
	// the metadata service: true
	// another port of the site's address: true
}
