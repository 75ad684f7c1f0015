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

// Frequent checkpoints leave the output exact, overlapping (the default: the
// next one starts while a paimon store's commit of the last still runs) or
// one at a time.
func TestRunFrequentCheckpointsVerify(t *testing.T) {
	for _, overlap := range []string{"true", "false"} {
		var out, errb bytes.Buffer
		args := []string{"run", "--query", "q20", "--events", "20000", "--parallelism", "2", "--checkpoint-interval", "1ms",
			"--overlap-checkpoints=" + overlap, "--dir", t.TempDir(), "--verify"}
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("overlap %s: exit %d\nstdout:\n%s\nstderr:\n%s", overlap, code, out.String(), errb.String())
		}
		if !strings.Contains(out.String(), "verified") {
			t.Fatalf("overlap %s: no verification line in:\n%s", overlap, out.String())
		}
	}
}

func TestRunRejectsUnknownBackend(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"run", "--backend", "nope", "--dir", t.TempDir()}, &out, &errb); code != 2 {
		t.Fatalf("exit %d, want 2 (usage)", code)
	}
}

// A run killed after a checkpoint and resumed with --restore latest at
// another parallelism writes exactly the reference output.
func TestRunKillAndRestore(t *testing.T) {
	dir := t.TempDir()
	common := []string{"run", "--query", "q4", "--events", "20000", "--checkpoint-interval", "0", "--dir", dir, "--backend", "pebble"}
	var out, errb bytes.Buffer
	if code := run(append(common, "--parallelism", "1", "--kill-after-events", "8000"), &out, &errb); code != 0 {
		t.Fatalf("first run: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "killed") {
		t.Fatalf("first run not killed:\n%s", out.String())
	}
	out.Reset()
	if code := run(append(common, "--parallelism", "2", "--restore", "latest", "--verify"), &out, &errb); code != 0 {
		t.Fatalf("restored run: exit %d\n%s%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"restored     checkpoint", "verified"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("no %q in:\n%s", want, out.String())
		}
	}
}

// A resumed run must read the input of the run it resumes.
func TestRunRestoreOtherInput(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	args := []string{"run", "--events", "4000", "--checkpoint-interval", "0", "--dir", dir, "--kill-after-events", "2000"}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("first run: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if code := run([]string{"run", "--events", "5000", "--dir", dir, "--restore", "latest"}, &out, &errb); code != 2 {
		t.Fatalf("resume with other --events: exit %d, want 2 (usage)\n%s", code, errb.String())
	}
}

// --restore latest without a checkpoint fails instead of starting over.
func TestRunRestoreWithoutCheckpoint(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"run", "--events", "1000", "--dir", t.TempDir(), "--restore", "latest"}, &out, &errb); code == 0 {
		t.Fatalf("restore without a checkpoint succeeded:\n%s", out.String())
	}
}
