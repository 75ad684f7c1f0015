package table

import (
	"bytes"
	"strings"
	"testing"
)

func TestCheckBucket(t *testing.T) {
	tests := []struct {
		name    string
		build   func(b *memBucket) ([]DataFileMeta, DeletionVectors)
		wantErr string
	}{
		{
			name: "clean: hidden older versions, level 0 ignored",
			build: func(b *memBucket) ([]DataFileMeta, DeletionVectors) {
				dvs := DeletionVectors{}
				dvs.Add("l5", 0)
				return []DataFileMeta{
					b.file("l0", 0, del("a", 9)),
					b.file("l3", 3, ins("a", 5, "")),
					b.file("l5", 5, ins("a", 1, ""), ins("b", 1, "")),
				}, dvs
			},
		},
		{
			name: "a key visible twice",
			build: func(b *memBucket) ([]DataFileMeta, DeletionVectors) {
				return []DataFileMeta{b.file("l3", 3, ins("a", 5, "")), b.file("l5", 5, ins("a", 1, ""))}, DeletionVectors{}
			},
			wantErr: "visible in l3 (level 3) and l5 (level 5)",
		},
		{
			name: "the newest version hidden",
			build: func(b *memBucket) ([]DataFileMeta, DeletionVectors) {
				dvs := DeletionVectors{}
				dvs.Add("l3", 0)
				return []DataFileMeta{b.file("l3", 3, ins("a", 5, "")), b.file("l5", 5, ins("a", 1, ""))}, dvs
			},
			wantErr: "visible row in l5 has sequence 1, a hidden one has 5",
		},
		{
			name: "a visible retraction",
			build: func(b *memBucket) ([]DataFileMeta, DeletionVectors) {
				return []DataFileMeta{b.file("l5", 5, del("a", 1))}, DeletionVectors{}
			},
			wantErr: "is a retraction",
		},
		{
			name: "a vector of a level-0 file",
			build: func(b *memBucket) ([]DataFileMeta, DeletionVectors) {
				dvs := DeletionVectors{}
				dvs.Add("l0", 0)
				return []DataFileMeta{b.file("l0", 0, ins("a", 1, ""))}, dvs
			},
			wantErr: "not a live level >= 1 file",
		},
		{
			name: "a vector beyond the file",
			build: func(b *memBucket) ([]DataFileMeta, DeletionVectors) {
				dvs := DeletionVectors{}
				dvs.Add("l5", 7)
				return []DataFileMeta{b.file("l5", 5, ins("a", 1, ""))}, dvs
			},
			wantErr: "deletes position 7 of 1 rows",
		},
		{
			name: "metadata key range wider than the rows",
			build: func(b *memBucket) ([]DataFileMeta, DeletionVectors) {
				f := b.file("l5", 5, ins("b", 1, ""), ins("c", 1, ""))
				f.MinKey = []byte("a")
				return []DataFileMeta{f}, DeletionVectors{}
			},
			wantErr: "keys run 62..63, metadata says 61..63",
		},
		{
			name: "row count differs",
			build: func(b *memBucket) ([]DataFileMeta, DeletionVectors) {
				f := b.file("l5", 5, ins("b", 1, ""), ins("c", 1, ""))
				f.RowCount = 3
				return []DataFileMeta{f}, DeletionVectors{}
			},
			wantErr: "2 rows, metadata says 3",
		},
		{
			name: "rows out of order",
			build: func(b *memBucket) ([]DataFileMeta, DeletionVectors) {
				f := b.file("l5", 5, ins("a", 1, ""), ins("b", 1, ""))
				b.files["l5"] = []memRow{ins("b", 1, ""), ins("a", 1, "")}
				f.MinKey, f.MaxKey = []byte("a"), []byte("b")
				return []DataFileMeta{f}, DeletionVectors{}
			},
			wantErr: "do not ascend",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newMemBucket()
			files, dvs := tt.build(b)
			l, err := NewLevels(bytes.Compare, files, 6)
			if err != nil {
				t.Fatal(err)
			}
			err = CheckBucket(l, dvs, b)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// CheckBucket re-checks overlap with the row encoding, so a comparator that
// disagrees with it (here: a reversed one) cannot hide overlapping files.
func TestCheckBucketOverlapIndependentOfComparator(t *testing.T) {
	b := newMemBucket()
	x := b.file("x", 4, ins("a", 1, ""), ins("m", 1, ""))
	y := b.file("y", 4, ins("c", 1, ""), ins("z", 1, ""))
	reversed := func(p, q []byte) int { return -bytes.Compare(p, q) }
	l, err := NewLevels(reversed, []DataFileMeta{x, y}, 6)
	if err != nil {
		t.Fatal(err) // reversed, y sorts first and x.min "a" comes after y.max "z"
	}
	if err := CheckBucket(l, DeletionVectors{}, b); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Fatalf("err = %v", err)
	}
}
