package table

import (
	"bytes"
	"strings"
	"testing"
)

func TestLookupSuperseded(t *testing.T) {
	b := newMemBucket()
	l, err := NewLevels(bytes.Compare, []DataFileMeta{
		b.file("l2", 2, ins("c", 7, ""), ins("e", 7, "")),
		b.file("l3a", 3, ins("a", 5, ""), ins("c", 5, "")),
		b.file("l3b", 3, ins("g", 5, ""), ins("k", 5, "")),
		b.file("l5", 5, ins("a", 1, ""), ins("b", 1, ""), ins("c", 1, ""), ins("g", 1, ""), ins("z", 1, "")),
	}, 6)
	if err != nil {
		t.Fatal(err)
	}
	keys := func(ks ...string) [][]byte {
		var out [][]byte
		for _, k := range ks {
			out = append(out, []byte(k))
		}
		return out
	}
	tests := []struct {
		name  string
		level int
		keys  [][]byte
		dvs   func() DeletionVectors
		want  string
	}{
		{name: "no keys", level: 1, want: ""},
		{name: "first level holding the key wins", level: 1, keys: keys("c"), want: "l2{0}"},
		{name: "below level 2", level: 2, keys: keys("a", "c", "g"), want: "l3a{0,1} l3b{0}"},
		{name: "keys between files fall through", level: 2, keys: keys("b", "d", "z"), want: "l5{1,4}"},
		{name: "nothing below the max level", level: 5, keys: keys("a"), want: ""},
		{name: "past an empty level to the deepest", level: 3, keys: keys("a", "d", "z"), want: "l5{0,4}"},
		{
			name: "a deleted row is not found: the lookup goes deeper", level: 2, keys: keys("a", "g"),
			dvs:  func() DeletionVectors { d := DeletionVectors{}; d.Add("l3a", 0); return d },
			want: "l3b{0} l5{0}",
		},
		{
			name: "deleted everywhere: nothing to supersede", level: 2, keys: keys("a"),
			dvs:  func() DeletionVectors { d := DeletionVectors{}; d.Add("l3a", 0); d.Add("l5", 0); return d },
			want: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dvs := DeletionVectors{}
			if tt.dvs != nil {
				dvs = tt.dvs()
			}
			before := dvString(dvs)
			got, err := LookupSuperseded(l, tt.level, tt.keys, dvs, b)
			if err != nil {
				t.Fatal(err)
			}
			if s := dvString(got); s != tt.want {
				t.Fatalf("superseded = %q, want %q", s, tt.want)
			}
			if dvString(dvs) != before {
				t.Fatal("LookupSuperseded changed its input vectors")
			}
		})
	}
	if _, err := LookupSuperseded(l, 1, keys("c", "a"), DeletionVectors{}, b); err == nil || !strings.Contains(err.Error(), "ascending") {
		t.Fatalf("unsorted keys: err = %v", err)
	}
}

func TestFindKeysByScan(t *testing.T) {
	b := newMemBucket()
	f := b.file("f", 1, ins("b", 0, ""), ins("d", 0, ""), ins("f", 0, ""))
	it, _ := b.Open(f, nil)
	got, err := findKeysByScan(it, [][]byte{[]byte("a"), []byte("d"), []byte("e"), []byte("f"), []byte("g")})
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{-1, 1, -1, 2, -1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("positions = %v, want %v", got, want)
		}
	}
}

func TestDeletionVectors(t *testing.T) {
	d := DeletionVectors{}
	if !d.Add("f", 3) || d.Add("f", 3) {
		t.Fatal("Add does not report newness")
	}
	if !d.IsDeleted("f", 3) || d.IsDeleted("f", 4) || d.IsDeleted("g", 3) || d.IsDeleted("f", -1) {
		t.Fatal("IsDeleted is wrong")
	}
	c := d.Clone()
	c.Add("f", 4)
	if d.IsDeleted("f", 4) {
		t.Fatal("Clone shares bitmaps")
	}
	if d.Equal(c) || !d.Equal(d.Clone()) {
		t.Fatal("Equal is wrong")
	}
	other := DeletionVectors{}
	other.Add("f", 3)
	if d.Merge(other) {
		t.Fatal("merging known deletions reports a change")
	}
	other.Add("g", 1)
	if !d.Merge(other) || !d.IsDeleted("g", 1) {
		t.Fatal("merge lost a deletion")
	}
	if !d.Remove("g") || d.Remove("g") {
		t.Fatal("Remove does not report presence")
	}
	empty := DeletionVectors{}
	empty.Add("h", 1)
	empty["h"].Remove(1)
	if !empty.Equal(DeletionVectors{}) {
		t.Fatal("an empty vector is not the same as none")
	}
}
