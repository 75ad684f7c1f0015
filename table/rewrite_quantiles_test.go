package table

import (
	"bytes"
	"path"
	"testing"
)

func TestKeyQuantiles(t *testing.T) {
	files, err := NewDataBucketFiles(NewLocalFileIO(), path.Join(t.TempDir(), "bucket-0"), kvSchema(), BucketFilesOptions{
		TargetFileSize: 128 << 20, NewFileName: func() string { return "unused.parquet" },
	})
	if err != nil {
		t.Fatal(err)
	}
	// 10,000 rows over ten pages: keys 0, 2, 4, ...
	f := writeKVRange(t, files, "f.parquet", 5, 0, 2, 10_000, 0)
	keyTypes := []DataType{Int().NotNull()}
	for _, tc := range []struct {
		pieces int
		want   []int64
	}{
		{pieces: 0},
		{pieces: 1},
		{pieces: 2, want: []int64{10_000}},
		{pieces: 4, want: []int64{5_000, 10_000, 15_000}},
		{pieces: 3, want: []int64{2 * 3333, 2 * 6666}},
	} {
		got, err := files.KeyQuantiles(f, tc.pieces)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tc.want) {
			t.Fatalf("%d pieces: %d keys, want %d", tc.pieces, len(got), len(tc.want))
		}
		for i, row := range got {
			ds, err := DecodeBinaryRow(row, keyTypes)
			if err != nil {
				t.Fatal(err)
			}
			if ds[0].Int != tc.want[i] {
				t.Errorf("%d pieces: key %d is %d, want %d", tc.pieces, i, ds[0].Int, tc.want[i])
			}
			if !bytes.Equal(row, EncodeBinaryRow(keyTypes, ds)) {
				t.Errorf("%d pieces: key %d does not round-trip", tc.pieces, i)
			}
		}
	}

	// More pieces than rows: each key once, never the last.
	small := writeKVRange(t, files, "small.parquet", 5, 7, 1, 3, 0)
	got, err := files.KeyQuantiles(small, 10)
	if err != nil {
		t.Fatal(err)
	}
	var keys []int64
	for _, row := range got {
		ds, err := DecodeBinaryRow(row, keyTypes)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, ds[0].Int)
	}
	if len(keys) != 2 || keys[0] != 7 || keys[1] != 8 {
		t.Fatalf("3 rows in 10 pieces: keys %v, want [7 8]", keys)
	}
}

// The quantiles of a file with a composite key and strings cut a bounded
// rewrite into pieces that together write every row once.
func TestKeyQuantilesCutRewrite(t *testing.T) {
	n := 0
	files, err := NewDataBucketFiles(NewLocalFileIO(), path.Join(t.TempDir(), "bucket-0"), mapStateSchema(), BucketFilesOptions{
		TargetFileSize: 128 << 20, NewFileName: func() string { n++; return "out-" + string(rune('a'+n)) + ".parquet" },
	})
	if err != nil {
		t.Fatal(err)
	}
	var deep, shallow []int64
	for i := range int64(5000) {
		if i%3 == 0 {
			shallow = append(shallow, i*5+1<<20)
		} else {
			deep = append(deep, i*5+1<<20)
		}
	}
	df := writeStateRows(t, files, "deep.parquet", 5, deep, 0)
	sf := writeStateRows(t, files, "shallow.parquet", 1, shallow, 10_000)
	cmp := NewKeyComparator([]DataType{Int().NotNull(), BigInt().NotNull(), BigInt().NotNull()})
	cuts, err := files.KeyQuantiles(df, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(cuts) != 3 {
		t.Fatalf("%d cuts, want 3", len(cuts))
	}
	l, err := NewLevels(cmp, []DataFileMeta{df, sf}, 6)
	if err != nil {
		t.Fatal(err)
	}
	dvs := DeletionVectors{}
	var written int64
	var after []byte
	for i := 0; i <= len(cuts); i++ {
		var upTo []byte
		if i < len(cuts) {
			upTo = cuts[i]
			if after != nil && cmp(after, upTo) >= 0 {
				t.Fatalf("cut %d does not ascend", i)
			}
		}
		plan := CompactPlan{OutputLevel: 5, DropDelete: true, Steps: []CompactStep{{
			Kind: StepRewrite, Sections: [][]SortedRun{{{Files: []DataFileMeta{sf}}}}, Bounds: &KeyBounds{After: after, UpTo: upTo},
		}}}
		// The output level's file lies across every cut: only the
		// level-1 input takes part in the bounded steps here.
		res, err := Compact(plan, l, dvs, files)
		if err != nil {
			t.Fatal(err)
		}
		var piece int64
		for _, f := range res.Added {
			piece += f.RowCount
		}
		// The deep file's quartiles cut the shallow file's keys, spread
		// alike, about evenly too.
		if q := int64(len(shallow)) / 4; piece < q*3/4 || piece > q*5/4 {
			t.Errorf("piece %d wrote %d rows, want about %d", i, piece, q)
		}
		written += piece
		dvs = res.DVs
		after = upTo
	}
	if written != int64(len(shallow)) {
		t.Fatalf("bounded pieces wrote %d rows, want %d", written, len(shallow))
	}
}
