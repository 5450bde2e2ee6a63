package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestShape: -h in the shape every example shares, and Ctrl-C (an ended
// context) prints the report and exits 130.
func TestShape(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, &out, &errOut); code != 0 ||
		!strings.HasPrefix(out.String(), "usage: sitemapseed [flags]\n\n") || !strings.Contains(out.String(), "\nflags:\n  -url ") ||
		!strings.Contains(out.String(), "130 interrupted (Ctrl-C)") {
		t.Errorf("run(-h) = %d, stdout %q; want 0 and the usage in the shared shape", code, out.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out.Reset()
	errOut.Reset()
	code := run(ctx, nil, &out, &errOut)
	if code != 130 || !strings.HasSuffix(errOut.String(), "sitemapseed: interrupted\n") || !strings.Contains(out.String(), "sitemaps read") {
		t.Errorf("run after Ctrl-C = %d, stderr %q, stdout %q; want 130, \"interrupted\" and the report", code, errOut.String(), out.String())
	}
}
