package table

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func stamped(r memRow, ts int64) memRow { r.ts = &ts; return r }

func TestCompactExpiry(t *testing.T) {
	const now, ttl = 1000, 100 // expired: ts <= 900
	expiry := &RowExpiry{Field: "ts", TTLMillis: ttl, NowMillis: now}
	tests := []struct {
		name    string
		dv      bool
		files   func(b *memBucket) []DataFileMeta
		unit    func(l *Levels) CompactUnit
		want    map[string]string
		wantDVs string
	}{
		{
			name: "full compaction drops keys whose newest row expired", dv: true,
			files: func(b *memBucket) []DataFileMeta {
				return []DataFileMeta{
					b.file("u5", 5, stamped(ins("a", 1, "a1"), 10), stamped(ins("b", 1, "b1"), 10), ins("n", 1, "null ts"), stamped(ins("x", 1, "x1"), 900)),
					b.file("u3", 3, stamped(ins("b", 5, "b5"), 950), stamped(ins("c", 5, "c5"), 901)),
				}
			},
			unit: func(l *Levels) CompactUnit { return CompactUnit{OutputLevel: 5, Files: l.AllFiles()} },
			// a and x expired; b's newest row is fresh, though its older one is not.
			want: map[string]string{"b": "b5", "c": "c5", "n": "null ts"},
		},
		{
			name: "an expired level-0 row still supersedes the row below", dv: true,
			files: func(b *memBucket) []DataFileMeta {
				return []DataFileMeta{
					b.file("u5", 5, stamped(ins("a", 1, "a1"), 990), stamped(ins("b", 1, "b1"), 990)),
					b.file("n1", 0, stamped(ins("a", 7, "a7"), 500), del("z", 8)),
				}
			},
			unit:    func(l *Levels) CompactUnit { return CompactUnit{OutputLevel: 4, Files: l.Level0()} },
			want:    map[string]string{"b": "b1"},
			wantDVs: "u5{0}",
		},
		{
			name: "kept where retractions are kept",
			files: func(b *memBucket) []DataFileMeta {
				return []DataFileMeta{
					b.file("u5", 5, stamped(ins("b", 1, "b1"), 990)),
					b.file("n1", 0, stamped(ins("a", 7, "a7"), 500), del("z", 8)),
					b.file("n0", 0, stamped(ins("a", 6, "a6"), 500)),
				}
			},
			unit: func(l *Levels) CompactUnit { return CompactUnit{OutputLevel: 4, Files: l.Level0()} },
			want: map[string]string{"a": "a7", "b": "b1", "z": ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newMemBucket()
			l, err := NewLevels(bytes.Compare, tt.files(b), 6)
			if err != nil {
				t.Fatal(err)
			}
			o := CompactionOptions{SmallFileSize: 1 << 30, DeletionVectors: tt.dv}
			plan := PlanCompaction(bytes.Compare, tt.unit(l), l, o)
			plan.Expiry = expiry
			res, err := Compact(plan, l, DeletionVectors{}, b)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Apply(res.Deleted, res.Added); err != nil {
				t.Fatal(err)
			}
			if tt.dv {
				if err := CheckBucket(l, res.DVs, b); err != nil {
					t.Fatal(err)
				}
			}
			if got := b.visibleRows(l, res.DVs); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("rows = %v, want %v", got, tt.want)
			}
			if got := dvString(res.DVs); got != tt.wantDVs {
				t.Fatalf("deletion vectors = %q, want %q", got, tt.wantDVs)
			}
		})
	}
}

func TestCompactExpiryErrors(t *testing.T) {
	b := newMemBucket()
	l, err := NewLevels(bytes.Compare, []DataFileMeta{b.file("u5", 5, ins("a", 1, ""))}, 6)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []RowExpiry{{Field: "nope", TTLMillis: 1, NowMillis: 2}, {Field: "ts", TTLMillis: -1, NowMillis: 2}} {
		plan := CompactPlan{OutputLevel: 5, DropDelete: true, Expiry: &e}
		if _, err := Compact(plan, l, DeletionVectors{}, b); err == nil || !strings.Contains(err.Error(), "row expiry") {
			t.Fatalf("%+v: err = %v", e, err)
		}
	}
}
