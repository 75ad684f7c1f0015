package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/lakestate/lakestate/nexmark"
)

// With --output log the output goes through files and still equals the
// reference; --memprofile writes a heap profile per run.
func TestBenchOutputLogAndMemProfile(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "heap.prof")
	var out, errb bytes.Buffer
	args := []string{"bench", "--queries", "q18", "--backends", "memory,paimon", "--events", "4000",
		"--checkpoint-interval", "0", "--output", "log", "--memprofile", prof, "--json"}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, errb.String())
	}
	var res benchResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if !res.Config.OutputLog {
		t.Error("config does not record the output log")
	}
	cfg := nexmark.DefaultConfig()
	cfg.NumEvents, cfg.Seed = 4000, 1
	want, err := referenceOutput("q18", cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Cells {
		if c.Digest != nexmark.Digest(want) {
			t.Errorf("%s: digest %s, reference %s", c.Backend, c.Digest, nexmark.Digest(want))
		}
		if c.PeakLiveBytes == 0 || c.PeakLiveBytes > c.PeakHeapBytes {
			t.Errorf("%s: peak live %d, peak heap %d", c.Backend, c.PeakLiveBytes, c.PeakHeapBytes)
		}
		b, err := os.ReadFile(prof + "-q18-" + c.Backend + "-1")
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 100 || b[0] != 0x1f || b[1] != 0x8b { // pprof writes gzipped protobuf
			t.Errorf("%s: %d bytes of heap profile, not a gzipped profile", c.Backend, len(b))
		}
	}
}

func TestBenchRefusesUnknownOutput(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"bench", "--output", "disk"}, &out, &errb); code != 2 {
		t.Errorf("exit %d, want 2 (usage)", code)
	}
}
