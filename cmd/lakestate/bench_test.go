package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/lakestate/lakestate/nexmark"
)

func TestBenchJSONMatchesReference(t *testing.T) {
	var out, errb bytes.Buffer
	args := []string{"bench", "--queries", "q4,q18", "--backends", "memory", "--events", "5000", "--runs", "2",
		"--parallelism", "2", "--checkpoint-interval", "0", "--dir", t.TempDir(), "--json"}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	var res benchResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out.String())
	}
	if len(res.Cells) != 2 {
		t.Fatalf("%d result cells, want 2 (q4, q18 on memory)", len(res.Cells))
	}
	cfg := nexmark.DefaultConfig()
	cfg.NumEvents, cfg.Seed = 5000, 1
	for _, c := range res.Cells {
		if len(c.Runs) != 2 {
			t.Errorf("%s on %s: %d runs, want 2", c.Query, c.Backend, len(c.Runs))
		}
		if !(c.EventsPerSec > 0) || !(c.EventsPerCoreSec > 0) || c.PeakHeapBytes == 0 || c.Checkpoints < 1 || c.UploadBytesPerChk <= 0 || len(c.Runs[0].SyncMillis) == 0 {
			t.Errorf("%s on %s: implausible figures %+v", c.Query, c.Backend, c)
		}
		want, err := referenceOutput(c.Query, cfg, 2)
		if err != nil {
			t.Fatal(err)
		}
		if d := nexmark.Digest(want); c.Digest != d {
			t.Errorf("%s: digest %s, reference %s", c.Query, c.Digest, d)
		}
	}
}

func TestBenchTextTable(t *testing.T) {
	var out, errb bytes.Buffer
	args := []string{"bench", "--queries", "q20", "--backends", "memory", "--events", "3000", "--checkpoint-interval", "0"}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, errb.String())
	}
	for _, want := range []string{"events/s/core", "q20", "memory"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
}

func TestBenchRejectsBadArguments(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "--backends", "nope"},
		{"bench", "--queries", "q99"},
		{"bench", "--backends", "memory,memory"},
		{"bench", "--events", "0"},
	} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)", args, code)
		}
	}
}

func TestBenchRatiosAndGeomean(t *testing.T) {
	cfg := benchConfig{Queries: []string{"q4", "q9"}, Backends: []string{"memory", "paimon", "pebble"}, Runs: 1}
	r := newBenchResult(cfg)
	if r.Subject != "paimon" {
		t.Fatalf("subject %q, want paimon", r.Subject)
	}
	rate := map[string]map[string]float64{
		"q4": {"memory": 100, "paimon": 200, "pebble": 50},
		"q9": {"memory": 100, "paimon": 50, "pebble": 25},
	}
	for q, byBackend := range rate {
		for b, eps := range byBackend {
			m := runMeasure{EventsPerSec: eps, EventsPerCoreSec: eps / 2, Digest: q,
				SyncMillis: []float64{1, 2, 3, 100}, UploadedBytes: 40, Checkpoints: 2}
			if err := r.add(q, b, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.summarize()
	want := map[[2]string]float64{
		{"q4", "memory"}: 2, {"q9", "memory"}: 0.5, {"geomean", "memory"}: 1,
		{"q4", "pebble"}: 4, {"q9", "pebble"}: 2, {"geomean", "pebble"}: math.Sqrt(8),
	}
	if len(r.Ratios) != len(want) {
		t.Fatalf("%d ratios, want %d: %+v", len(r.Ratios), len(want), r.Ratios)
	}
	for _, rt := range r.Ratios {
		w := want[[2]string{rt.Query, rt.Other}]
		if math.Abs(rt.Throughput-w) > 1e-9 || math.Abs(rt.PerCore-w) > 1e-9 {
			t.Errorf("paimon/%s on %s: %v (per core %v), want %v", rt.Other, rt.Query, rt.Throughput, rt.PerCore, w)
		}
	}
	c := r.cell("q4", "paimon")
	if c.SyncP50Millis != 2 || c.SyncP99Millis != 100 || c.UploadBytesPerChk != 20 {
		t.Errorf("checkpoint figures p50 %v p99 %v upload %v, want 2, 100, 20", c.SyncP50Millis, c.SyncP99Millis, c.UploadBytesPerChk)
	}
	var text bytes.Buffer
	if err := r.writeText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "paimon/pebble") || !strings.Contains(text.String(), "2.83x") {
		t.Errorf("ratio table lacks paimon/pebble geomean 2.83x:\n%s", text.String())
	}
}

func TestBenchRefusesDifferingOutputs(t *testing.T) {
	r := newBenchResult(benchConfig{Queries: []string{"q4"}, Backends: []string{"memory", "paimon"}, Runs: 1})
	if err := r.add("q4", "memory", runMeasure{Digest: "aaaa"}); err != nil {
		t.Fatal(err)
	}
	if err := r.add("q4", "paimon", runMeasure{Digest: "bbbb"}); err == nil {
		t.Fatal("a backend's differing output was accepted")
	}
}

func TestPercentileNearestRank(t *testing.T) {
	v := []float64{5, 1, 4, 2, 3}
	for p, want := range map[float64]float64{50: 3, 99: 5, 1: 1, 100: 5} {
		if got := percentile(v, p); got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
	if !math.IsNaN(percentile(nil, 50)) {
		t.Error("percentile of nothing is not NaN")
	}
}
