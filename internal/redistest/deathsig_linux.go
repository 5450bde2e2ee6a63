//go:build linux

package redistest

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes the server die with the test process, should the
// test be killed before its cleanup runs.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
