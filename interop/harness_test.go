package interop

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// reader is one implementation that prints a table as sorted JSONL; given
// several tables, one process prints each one's rows after a line "# DIR".
type reader struct {
	name string
	read func(t *testing.T, dirs ...string) string
}

// readEach reads several tables in one run of a reader and returns each
// table's output by directory.
func (r reader) readEach(t *testing.T, dirs []string) map[string]string {
	t.Helper()
	out := r.read(t, dirs...)
	if len(dirs) == 1 {
		return map[string]string{dirs[0]: out}
	}
	tables := map[string]string{}
	dir := ""
	for _, line := range strings.SplitAfter(out, "\n") {
		if header, ok := strings.CutPrefix(line, "# "); ok {
			dir = strings.TrimSuffix(header, "\n")
			tables[dir] = ""
			continue
		}
		if dir == "" && line != "" {
			t.Fatalf("%s: output starts with %q, not a table header", r.name, line)
		}
		tables[dir] += line
	}
	for _, d := range dirs {
		if _, ok := tables[d]; !ok {
			t.Fatalf("%s printed no rows section for %s", r.name, d)
		}
	}
	return tables
}

// harness locates what interop/setup.sh installed.
type harness struct {
	interopDir   string
	root         string
	javaVersions []string // Paimon versions with a built Java harness
	pythons      []pythonEnv
}

type pythonEnv struct{ name, python string }

func splitEnv(name, fallback string) []string {
	if v, ok := os.LookupEnv(name); ok {
		return strings.Fields(v)
	}
	return strings.Fields(fallback)
}

// newHarness skips the test unless LAKESTATE_INTEROP=1 and fails it when setup.sh
// has not installed what the interop tests need.
func newHarness(t *testing.T) *harness {
	t.Helper()
	if os.Getenv("LAKESTATE_INTEROP") != "1" {
		t.Skip("interop tests run with LAKESTATE_INTEROP=1, after interop/setup.sh")
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{interopDir: wd, root: filepath.Dir(wd)}
	// The same defaults as setup.sh.
	for _, v := range splitEnv("LAKESTATE_PAIMON_JAVA_VERSIONS", "1.4.2 2.0.0") {
		if _, err := os.Stat(filepath.Join(wd, "java", "target", "paimon-"+v, "classpath.txt")); err != nil {
			t.Fatalf("Java harness for Paimon %s is not built; run interop/setup.sh: %v", v, err)
		}
		h.javaVersions = append(h.javaVersions, v)
	}
	h.pythons = append(h.pythons, pythonEnv{"pypaimon (.venv)", filepath.Join(h.root, ".venv", "bin", "python")})
	for _, line := range splitEnv("LAKESTATE_PYPAIMON_LINES", "1.4") {
		name := "pypaimon-" + line
		h.pythons = append(h.pythons, pythonEnv{name, filepath.Join(wd, ".venvs", name, "bin", "python")})
	}
	for _, p := range h.pythons {
		if _, err := os.Stat(p.python); err != nil {
			t.Fatalf("%s is not installed; run interop/setup.sh: %v", p.name, err)
		}
	}
	if len(h.javaVersions) == 0 {
		t.Fatal("LAKESTATE_PAIMON_JAVA_VERSIONS names no Paimon version")
	}
	return h
}

// run executes a command and returns its stdout; a failure fails the test
// with the command's stderr.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// java runs the Java harness against one Paimon version.
func (h *harness) java(t *testing.T, version string, args ...string) string {
	t.Helper()
	return run(t, filepath.Join(h.interopDir, "paimon-java"), append([]string{version}, args...)...)
}

// paimonReaders are every installed Paimon implementation, Java and Python.
func (h *harness) paimonReaders() []reader {
	var rs []reader
	for _, v := range h.javaVersions {
		rs = append(rs, reader{"java-paimon-" + v, func(t *testing.T, dirs ...string) string {
			return h.java(t, v, append([]string{"read"}, dirs...)...)
		}})
	}
	for _, p := range h.pythons {
		script := filepath.Join(h.interopDir, "python", "read_table.py")
		rs = append(rs, reader{p.name, func(t *testing.T, dirs ...string) string {
			return run(t, p.python, append([]string{script}, dirs...)...)
		}})
	}
	return rs
}

var lakestateCLI struct {
	once sync.Once
	dir  string // temporary directory holding the binary
	path string
	err  error // why the CLI cannot inspect tables
}

// lakestateRead prints a table through `lakestate inspect table`, or skips the
// test while the CLI cannot inspect tables yet.
func (h *harness) lakestateRead(t *testing.T, dir string) string {
	t.Helper()
	return run(t, h.lakestate(t), "inspect", "table", dir, "--format", "jsonl")
}

// lakestate builds the lakestate command once and returns its path, or skips
// the test while the CLI cannot inspect tables yet.
func (h *harness) lakestate(t *testing.T) string {
	t.Helper()
	c := &lakestateCLI
	c.once.Do(func() {
		c.dir, c.err = os.MkdirTemp("", "lakestate-interop")
		if c.err != nil {
			return
		}
		c.path = filepath.Join(c.dir, "lakestate")
		build := exec.Command("go", "build", "-o", c.path, "./cmd/lakestate")
		build.Dir = h.root
		if out, err := build.CombinedOutput(); err != nil {
			c.err = fmt.Errorf("go build ./cmd/lakestate: %v\n%s", err, out)
			return
		}
		var stderr bytes.Buffer
		probe := exec.Command(c.path, "inspect", "table")
		probe.Stderr = &stderr
		if err := probe.Run(); err != nil && strings.Contains(stderr.String(), "unknown command") {
			c.err = errNoInspect
		}
	})
	if errors.Is(c.err, errNoInspect) {
		t.Skip("lakestate inspect table is not implemented yet")
	}
	if c.err != nil {
		t.Fatal(c.err)
	}
	return c.path
}

var errNoInspect = errors.New("lakestate has no inspect table command")

func TestMain(m *testing.M) {
	code := m.Run()
	if lakestateCLI.dir != "" {
		os.RemoveAll(lakestateCLI.dir)
	}
	os.Exit(code)
}

// sortedLines splits JSONL output into its lines, sorted by their bytes.
func sortedLines(s string) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	slices.Sort(lines)
	return lines
}

// requireSameRows fails the test unless got holds exactly the rows of want,
// in any order; the message lists the rows only one side has.
func requireSameRows(t *testing.T, who string, want []string, got string) {
	t.Helper()
	g := sortedLines(got)
	if slices.Equal(want, g) {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s returned %d rows, want %d", who, len(g), len(want))
	for _, l := range want {
		if !slices.Contains(g, l) {
			fmt.Fprintf(&b, "\n  missing: %s", l)
		}
	}
	for _, l := range g {
		if !slices.Contains(want, l) {
			fmt.Fprintf(&b, "\n  extra:   %s", l)
		}
	}
	t.Error(b.String())
}

// copyTree copies a table directory, so readers never touch the shared original.
func copyTree(t *testing.T, from string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), filepath.Base(from))
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
	// os.CopyFS keeps read-only modes; writers that continue a table need write access.
	err := filepath.WalkDir(to, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if d.IsDir() {
			mode = 0o755
		}
		return os.Chmod(p, mode)
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}
