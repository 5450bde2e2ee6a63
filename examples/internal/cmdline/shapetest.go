package cmdline

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// A Run is an example's run function: args, output, and the exit status.
type Run func(ctx context.Context, args []string, stdout, stderr io.Writer) int

// TestShape checks, for the tests of the example name, that -h prints the
// usage in the shape every example shares, with the flag flagName, and
// that Ctrl-C (an ended context) prints a report holding report and ends
// with exit status 130.
func TestShape(t *testing.T, run Run, name, flagName, report string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, &out, &errOut); code != ExitOK ||
		!strings.HasPrefix(out.String(), "usage: "+name+" ") || !strings.Contains(out.String(), "\nflags:\n  -") || !strings.Contains(out.String(), "\n  -"+flagName+" ") ||
		!strings.Contains(out.String(), "130 interrupted (Ctrl-C)") {
		t.Errorf("%s -h = %d, stdout %q; want 0 and the usage in the shared shape", name, code, out.String())
	}
	if report == "" {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out.Reset()
	errOut.Reset()
	code := run(ctx, nil, &out, &errOut)
	if code != ExitInterrupted || !strings.HasSuffix(errOut.String(), name+": interrupted\n") || !strings.Contains(out.String(), report) {
		t.Errorf("%s after Ctrl-C = %d, stderr %q, stdout %q; want 130, \"interrupted\" and the report", name, code, errOut.String(), out.String())
	}
}
