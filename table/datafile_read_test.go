package table

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// rowStrings renders every row of a record as "v0|v1|..." for comparisons.
func rowStrings(rec arrow.Record) []string {
	out := make([]string, rec.NumRows())
	for i := range out {
		var parts []string
		for c := 0; c < int(rec.NumCols()); c++ {
			col := rec.Column(c)
			if col.IsNull(i) {
				parts = append(parts, "NULL")
				continue
			}
			switch a := col.(type) {
			case *array.Float64:
				parts = append(parts, fmt.Sprint(a.Value(i)))
			default:
				parts = append(parts, col.ValueStr(i))
			}
		}
		out[i] = strings.Join(parts, "|")
	}
	return out
}

func TestReadJavaWrittenDataFile(t *testing.T) {
	dir := fixtureDir(t, "pk-dv-parquet")
	path := filepath.Join(dir, "f1=10", "bucket-1", "data-d18e5571-abce-4309-ad4a-37f0bc93679f-0.parquet")
	d, err := OpenDataFile(NewLocalFileIO(), path, fixturePKSchema(true))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	fr, err := d.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Release()
	got := rowStrings(fr.Rows)
	want := []string{"Alex|10|0|16.1", "Bob|10|0|12.1", "David|10|0|17.1", "Emily|10|0|13.1", "Tony|10|0|14.1"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("rows %v want %v", got, want)
	}
	// Java assigned sequence numbers 0..4 in insertion order.
	if fmt.Sprint(fr.Seqs) != "[3 0 4 1 2]" || fmt.Sprint(fr.Kinds) != "[0 0 0 0 0]" {
		t.Errorf("seqs %v kinds %v", fr.Seqs, fr.Kinds)
	}
	sub, err := d.ReadRange(1, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Release()
	if got := rowStrings(sub.Rows); strings.Join(got, ",") != "Bob|10|0|12.1,David|10|0|17.1" {
		t.Fatalf("range rows %v", got)
	}
}
