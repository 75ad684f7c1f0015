package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of inspect")

// fixture is a table directory of ../shared/fixtures, which every checkout
// and CI run has beside the project.
func fixture(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "shared", "fixtures", name)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return dir
}

// TestInspectTableGolden runs inspect over the Java-written fixtures. The
// row counts are the ones each FIXTURE.md gives for a batch read of that
// snapshot; the goldens pin the full output.
func TestInspectTableGolden(t *testing.T) {
	tests := []struct {
		fixture string
		args    []string
		golden  string
		rows    int // jsonl lines, -1: not checked
	}{
		{"pk-dv-parquet", []string{"--format", "jsonl"}, "pk-dv-rows.jsonl", 8},
		{"pk-dv-parquet", nil, "pk-dv-rows.txt", -1},
		{"pk-dv-parquet", []string{"--files"}, "pk-dv-files.txt", -1},
		{"pk-dv-parquet", []string{"--files", "--format", "jsonl"}, "pk-dv-files.jsonl", 6},
		{"pk-dv-parquet", []string{"--snapshot", "1", "--format", "jsonl"}, "pk-dv-snapshot-1.jsonl", 0},
		{"pk-dv-parquet", []string{"--snapshot", "2", "--format", "jsonl"}, "pk-dv-snapshot-2.jsonl", 9},
		{"pk-dv-parquet", []string{"--snapshot", "3", "--format", "jsonl"}, "pk-dv-snapshot-3.jsonl", 9},
		{"pk-dv-parquet", []string{"--snapshot", "4", "--format", "jsonl"}, "pk-dv-snapshot-4.jsonl", 8},
		{"pk-mor-parquet", []string{"--format", "jsonl"}, "pk-mor-rows.jsonl", 11},
		{"pk-mor-parquet", nil, "pk-mor-rows.txt", -1},
		{"pk-mor-parquet", []string{"--files"}, "pk-mor-files.txt", -1},
		{"pk-mor-parquet", []string{"--files", "--format", "jsonl"}, "pk-mor-files.jsonl", 6},
		{"pk-mor-parquet", []string{"--snapshot", "1", "--format", "jsonl"}, "pk-mor-snapshot-1.jsonl", 9},
		{"pk-mor-parquet", []string{"--snapshot", "2", "--format", "jsonl"}, "pk-mor-snapshot-2.jsonl", 8},
		{"pk-mor-parquet", []string{"--snapshot", "4", "--format", "jsonl"}, "pk-mor-snapshot-4.jsonl", 10},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			args := append([]string{"inspect", "table", fixture(t, tt.fixture)}, tt.args...)
			var out, errOut bytes.Buffer
			if code := run(args, &out, &errOut); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			if tt.rows >= 0 {
				if got := strings.Count(out.String(), "\n"); got != tt.rows {
					t.Errorf("%d lines, want %d", got, tt.rows)
				}
			}
			golden := filepath.Join("testdata", "inspect", tt.golden)
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Fatalf("output differs from %s:\n%s", golden, out.String())
			}
		})
	}
}

func TestInspectTableErrors(t *testing.T) {
	tests := []struct {
		args     []string
		wantCode int
		wantErr  string
	}{
		{[]string{"inspect", "table"}, 2, "want one table directory"},
		{[]string{"inspect", "table", "a", "b"}, 2, "want one table directory"},
		{[]string{"inspect", "table", "x", "--format", "csv"}, 2, `--format "csv"`},
		{[]string{"inspect", "table", filepath.Join(t.TempDir(), "none")}, 1, "no schema file"},
		{[]string{"inspect", "table", fixture(t, "append-parquet")}, 1, "only primary-key tables are supported"},
		{[]string{"inspect", "table", fixture(t, "pk-dv-parquet"), "--snapshot", "9"}, 1, "snapshot-9"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[2:], " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := run(tt.args, &out, &errOut); code != tt.wantCode {
				t.Fatalf("exit %d, want %d (%s)", code, tt.wantCode, errOut.String())
			}
			if !strings.Contains(errOut.String(), tt.wantErr) {
				t.Fatalf("stderr = %q, want %q", errOut.String(), tt.wantErr)
			}
		})
	}
}
