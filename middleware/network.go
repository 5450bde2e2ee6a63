package robotsmw

import (
	"errors"
	"io"
	"net"
	"net/url"
)

// isNetworkError reports whether err is a transport failure: a refused,
// reset or timed-out connection, a DNS failure or a cut-off body. RFC 9110
// §15.6.4 notes that an overloaded server may refuse connections, and
// Google handles network errors like 5xx.
func isNetworkError(err error) bool {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Timeout() {
		return true
	}
	var oe *net.OpError
	var de *net.DNSError
	return errors.As(err, &oe) || errors.As(err, &de) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
