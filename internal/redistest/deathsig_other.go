//go:build !linux

package redistest

import "os/exec"

// dieWithTest does nothing here: the server is stopped by the test's
// cleanup only.
func dieWithTest(*exec.Cmd) {}
