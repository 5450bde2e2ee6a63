package promtext

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
	"github.com/robotsmw/robotsmw/policy"
)

var update = flag.Bool("update", false, "rewrite testdata/stats.golden")

// TestWriteGolden: the text of a Stats with every field set, against a
// golden file (robotsprom's tests check the same text against
// client_golang's).
func TestWriteGolden(t *testing.T) {
	s := robotsmw.Stats{
		Total: robotsmw.HostStats{Sent: 19, Pages: 12, Blocked: 5, Deferred: 4, Retried: 2,
			Backoffs: 2, GaveUp: 1, NotFollowed: 3},
		Robots: policy.FetchStats{Parsed: 6, AllowAll: 2, Status429: 1, Status5xx: 3, Timeout: 1, Network: 2, Unreachable: 4},
		Hosts:  2, Evicted: 7, Waiting: 1, PausedHosts: 1, InFlight: 3,
		Waits: robotsmw.WaitStats{Count: 11, Sum: 16902716657 * time.Nanosecond, Buckets: []robotsmw.WaitBucket{
			{UpTo: time.Millisecond, Count: 0}, {UpTo: 250 * time.Millisecond, Count: 1},
			{UpTo: 2500 * time.Millisecond, Count: 9}, {UpTo: time.Minute, Count: 11},
		}},
	}
	var b bytes.Buffer
	if err := Write(&b, s); err != nil {
		t.Fatalf("Write: %v", err)
	}
	path := filepath.Join("testdata", "stats.golden")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("Write =\n%s\nwant (%s)\n%s", b.String(), path, want)
	}
}

// TestEscape: HELP texts escape backslashes and newlines, label values
// double quotes too (the text format's rules).
func TestEscape(t *testing.T) {
	for _, tc := range []struct {
		in    string
		quote bool
		want  string
	}{
		{`a\b` + "\n" + `"c"`, false, `a\\b\n"c"`},
		{`a\b` + "\n" + `"c"`, true, `a\\b\n\"c\"`},
	} {
		if got := escape(tc.in, tc.quote); got != tc.want {
			t.Errorf("escape(%q, %v) = %q, want %q", tc.in, tc.quote, got, tc.want)
		}
	}
	for _, m := range Metrics(robotsmw.Stats{}) {
		if !strings.HasPrefix(m.Name, "robotsmw_") || m.Help == "" {
			t.Errorf("Metrics: family %q, help %q: want the robotsmw_ prefix and a help text", m.Name, m.Help)
		}
	}
}
