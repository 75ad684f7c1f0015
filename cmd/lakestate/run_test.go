package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunVerifiesAgainstReference(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"run", "--query", "q4", "--events", "20000", "--parallelism", "2", "--checkpoint-interval", "0", "--dir", dir, "--verify"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "verified") {
		t.Fatalf("no verification line in:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "q4.out")); err != nil {
		t.Fatal(err)
	}
}

func TestRunRejectsUnknownBackend(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"run", "--backend", "nope", "--dir", t.TempDir()}, &out, &errb); code != 2 {
		t.Fatalf("exit %d, want 2 (usage)", code)
	}
}
