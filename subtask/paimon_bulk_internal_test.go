package subtask

import (
	"testing"

	"github.com/lakestate/lakestate/table"
)

// A bulk load cuts one bucket's sorted rows into files of the top level,
// which a deletion-vector table reads at once and which pass the table's
// invariant check (no two files of a level overlap); a second load into the
// table is refused.
func TestBulkLoadCutsTopLevelFiles(t *testing.T) {
	b, err := OpenPaimon(t.TempDir(), PaimonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	l, pt := openTestTable(t, b, Layout{Name: "v", Kind: KindValue,
		Key:   []Column{{Name: "k", Type: table.BigInt().NotNull()}},
		Value: []Column{{Name: "n", Type: table.BigInt()}}})
	const n = 1000
	var rows []mutation
	for k := int64(0); k < n; k++ {
		key := l.AppendKey(nil, Key{Group: int32(k / 100), Cols: Row{Int(k)}})
		rows = append(rows, mutation{key: string(key), vals: Row{Int(k * 3)}})
	}
	sortMutations(rows)
	rec, _, err := pt.codec.writeRecord(rows)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()

	load, err := pt.bulkLoad(7)
	if err != nil {
		t.Fatal(err)
	}
	load.target = recordBytes(rec) / 4
	if err := load.write(rec, 0); err != nil {
		t.Fatal(err)
	}
	if err := load.commit(); err != nil {
		t.Fatal(err)
	}

	files, _, err := pt.t.LiveFiles(pt.snapshot)
	if err != nil {
		t.Fatal(err)
	}
	o, err := table.CompactionOptionsOf(pt.t.Schema())
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 4 {
		t.Fatalf("%d files, want the rows cut into at least 4", len(files))
	}
	var total int64
	for i, f := range files {
		if int(f.File.Level) != o.NumLevels-1 {
			t.Fatalf("file %d at level %d, want the top level %d", i, f.File.Level, o.NumLevels-1)
		}
		total += f.File.RowCount
	}
	if total != n {
		t.Fatalf("files hold %d rows, want %d", total, n)
	}
	if err := table.CheckTable(pt.t, pt.snapshot); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, n)
	for i, m := range rows {
		keys[i] = m.key
	}
	found := 0
	if err := pt.get(keys, func(i int, vals Row) {
		if !vals.Equal(rows[i].vals) {
			t.Errorf("key %d reads %v, want %v", i, vals, rows[i].vals)
		}
		found++
	}); err != nil {
		t.Fatal(err)
	}
	if found != n {
		t.Fatalf("read %d of %d keys", found, n)
	}
	if _, err := pt.bulkLoad(8); err == nil {
		t.Fatal("a bulk load into a table that holds a snapshot was accepted")
	}
}
