package main

import (
	"testing"

	"github.com/robotsmw/robotsmw/examples/internal/cmdline"
)

// TestShape: -h in the shape every example shares; Ctrl-C prints the
// report and exits 130.
func TestShape(t *testing.T) { cmdline.TestShape(t, run, "transport", "url", "Guard:") }
