package bench

import (
	"bytes"
	"testing"
)

func TestSynthetic(t *testing.T) {
	a, b := Synthetic(20, 7), Synthetic(20, 7)
	if len(a.Files) != 20 || len(a.Checks) < 20*20 || a.Bytes == 0 {
		t.Fatalf("Synthetic(20, 7) = %d files, %d checks, %d bytes; want 20 files, about 25 checks each", len(a.Files), len(a.Checks), a.Bytes)
	}
	for name, body := range a.Files {
		if !bytes.Equal(body, b.Files[name]) {
			t.Fatalf("Synthetic(20, 7) is not deterministic: %s differs", name)
		}
	}
	// Every engine accepts the generated files, and the verdicts are not
	// all alike.
	allowed := 0
	for _, e := range Engines {
		m := a.Compiled(e)
		for _, c := range a.Checks {
			if m[c.File] == nil {
				t.Fatalf("%s rejects generated %s", e.Name, c.File)
			}
			if e.Allowed(m[c.File], &c) {
				allowed++
			}
		}
	}
	if allowed == 0 || allowed == len(a.Checks)*len(Engines) {
		t.Errorf("generated workload: %d of %d verdicts allowed; want a mix", allowed, len(a.Checks)*len(Engines))
	}
}
