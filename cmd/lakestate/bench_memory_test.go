package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/lakestate/lakestate/nexmark"
)

// With --output log the output goes through files and still equals the
// reference; --memprofile writes a heap profile per run, --allocprofile an
// allocation profile per run.
func TestBenchOutputLogAndMemProfile(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "heap.prof")
	allocs := filepath.Join(dir, "allocs.prof")
	var out, errb bytes.Buffer
	args := []string{"bench", "--queries", "q18", "--backends", "memory,paimon", "--events", "4000",
		"--checkpoint-interval", "0", "--output", "log", "--memprofile", prof, "--allocprofile", allocs, "--json"}
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
		if p := readGzip(t, allocs+"-q18-"+c.Backend+"-1"); !bytes.Contains(p, []byte("alloc_space")) {
			t.Errorf("%s: allocation profile of %d bytes has no alloc_space samples", c.Backend, len(p))
		}
	}
}

// readGzip returns the decompressed content of a gzipped file.
func readGzip(t *testing.T, file string) []byte {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return b
}

func TestBenchRefusesUnknownOutput(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"bench", "--output", "disk"}, &out, &errb); code != 2 {
		t.Errorf("exit %d, want 2 (usage)", code)
	}
}
