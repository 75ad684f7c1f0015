package interop

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFixturesReadAlike holds every reader to what each Java-written fixture's
// FIXTURE.md says a correct reader returns (testdata/fixtures/*.jsonl). It
// validates the harness itself before any lakestate table is involved.
func TestFixturesReadAlike(t *testing.T) {
	h := newHarness(t)
	for _, name := range []string{"pk-dv-parquet", "pk-mor-parquet", "append-parquet"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := copyTree(t, filepath.Join(h.root, "..", "shared", "fixtures", name))
			want, err := os.ReadFile(filepath.Join("testdata", "fixtures", name+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range h.paimonReaders() {
				requireSameRows(t, r.name, sortedLines(string(want)), r.read(t, dir))
			}
			t.Run("lakestate", func(t *testing.T) {
				if name == "append-parquet" {
					t.Skip("append-only table: outside lakestate's primary-key profile")
				}
				requireSameRows(t, "lakestate inspect", sortedLines(string(want)), h.lakestateRead(t, dir))
			})
		})
	}
}

// TestPrimaryKeyLookupPrunesBuckets checks the lookup command on a fixture: a
// predicate on the whole primary key returns the one row, read from one bucket.
func TestPrimaryKeyLookupPrunesBuckets(t *testing.T) {
	h := newHarness(t)
	dir := copyTree(t, filepath.Join(h.root, "..", "shared", "fixtures", "pk-dv-parquet"))
	got := h.java(t, h.javaVersions[0], "lookup", dir, "f0=Alice", "f1=10", "f2=1")
	requireSameRows(t, "lookup", []string{`{"f0":"Alice","f1":10,"f2":1,"f3":19.1}`}, got)
	h.java(t, h.javaVersions[0], "lookup-all", dir)
}

// TestPaimonWritesEveryoneReads has each Java Paimon version write each table
// of testdata/java-write, then holds every reader, lakestate included, to the
// spec's replayed rows. Then another Paimon version continues the table (a new
// commit user appends and fully compacts), and every reader is checked again.
func TestPaimonWritesEveryoneReads(t *testing.T) {
	h := newHarness(t)
	specs, err := filepath.Glob(filepath.Join("testdata", "java-write", "*.json"))
	if err != nil || len(specs) == 0 {
		t.Fatalf("no specs in testdata/java-write: %v", err)
	}
	for _, path := range specs {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		spec := loadSpec(t, path)
		appended := loadRows(t, strings.TrimSuffix(path, ".json")+".append.jsonl")
		for i, writer := range h.javaVersions {
			continuer := h.javaVersions[(i+1)%len(h.javaVersions)]
			t.Run(name+"/written-by-"+writer, func(t *testing.T) {
				t.Parallel()
				dir := filepath.Join(t.TempDir(), name)
				h.java(t, writer, "write", dir, path)
				spec.Expect.check(t, h.java(t, writer, "describe", dir))
				h.checkAllReaders(t, "written", dir, spec.expectedRows(t, nil), spec.KnownIssues)
				h.java(t, writer, "lookup-all", dir)

				h.java(t, continuer, "append-compact", dir, strings.TrimSuffix(path, ".json")+".append.jsonl")
				h.checkAllReaders(t, "continued-by-"+continuer, dir, spec.expectedRows(t, appended), spec.KnownIssues)
			})
		}
	}
}

// TestStateTablesReadAlike reads every table under LAKESTATE_INTEROP_STATE_DIR
// (state tables a lakestate job left behind, e.g. a Nexmark run) with every
// reader and requires them all to return what lakestate inspect returns, and
// rows to be found again through a primary-key predicate.
func TestStateTablesReadAlike(t *testing.T) {
	h := newHarness(t)
	root := os.Getenv("LAKESTATE_INTEROP_STATE_DIR")
	if root == "" {
		t.Skip("LAKESTATE_INTEROP_STATE_DIR names no directory of state tables")
	}
	h.checkTablesReadAlike(t, root)
}

// checkTablesReadAlike requires every Paimon reader to return, for each table
// under root, what lakestate inspect returns, and every row to be found again
// through a predicate on its primary key (at most 100 rows per table, spread
// over the key order: each lookup plans anew). Each reader reads all the
// tables in one run, so many tables cost one process start per reader.
func (h *harness) checkTablesReadAlike(t *testing.T, root string) {
	t.Helper()
	tables := findTables(t, root)
	if len(tables) == 0 {
		t.Fatalf("no Paimon table under %s", root)
	}
	want := map[string][]string{}
	rows := 0
	for _, dir := range tables {
		want[dir] = sortedLines(h.lakestateRead(t, dir))
		rows += len(want[dir])
	}
	t.Logf("%d tables under %s, %d rows in all", len(tables), root, rows)
	if rows == 0 {
		t.Fatalf("no table under %s holds a row: nothing to compare", root)
	}
	for _, r := range h.paimonReaders() {
		got := r.readEach(t, tables)
		for _, dir := range tables {
			rel, _ := filepath.Rel(root, dir)
			requireSameRows(t, r.name+" of "+rel, want[dir], got[dir])
		}
	}
	h.java(t, h.javaVersions[0], append([]string{"lookup-all", "--max-keys", "100"}, tables...)...)
}

// checkAllReaders requires every Paimon reader and lakestate inspect to return
// exactly want, in a subtest named after the table's stage. Readers named in
// knownIssues are skipped with the reason.
func (h *harness) checkAllReaders(t *testing.T, stage, dir string, want []string, knownIssues map[string]string) {
	t.Helper()
	t.Run(stage, func(t *testing.T) {
		for _, r := range h.paimonReaders() {
			if why, ok := knownIssues[r.name]; ok {
				t.Logf("not read by %s: %s", r.name, why)
				continue
			}
			requireSameRows(t, r.name, want, r.read(t, dir))
		}
		t.Run("lakestate", func(t *testing.T) {
			requireSameRows(t, "lakestate inspect", want, h.lakestateRead(t, dir))
		})
	})
}

// findTables returns the Paimon table directories under root: those holding
// both a schema and a snapshot directory.
func findTables(t *testing.T, root string) []string {
	t.Helper()
	var tables []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		_, schemaErr := os.Stat(filepath.Join(p, "schema"))
		_, snapshotErr := os.Stat(filepath.Join(p, "snapshot"))
		if schemaErr == nil && snapshotErr == nil {
			tables = append(tables, p)
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tables
}
