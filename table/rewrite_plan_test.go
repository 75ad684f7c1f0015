package table

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func sectionsString(sections [][]SortedRun) string {
	var ss []string
	for _, s := range sections {
		var rs []string
		for _, r := range s {
			rs = append(rs, strings.Join(names(r.Files), "+"))
		}
		ss = append(ss, "["+strings.Join(rs, " ")+"]")
	}
	return strings.Join(ss, " ")
}

func TestPartitionSections(t *testing.T) {
	tests := []struct {
		name  string
		files []DataFileMeta
		want  string
	}{
		{name: "none", want: ""},
		{
			name: "two overlapping pairs",
			files: []DataFileMeta{
				testFile("c", 0, "e", "f", 1, 0, 0), testFile("a", 0, "a", "c", 1, 0, 0),
				testFile("d", 0, "e", "e", 1, 0, 0), testFile("b", 0, "b", "d", 1, 0, 0),
			},
			want: "[a b] [d c]",
		},
		{
			name: "a later file joins the run that ends first",
			files: []DataFileMeta{
				testFile("ab", 0, "a", "b", 1, 0, 0), testFile("ac", 0, "a", "c", 1, 0, 0), testFile("cd", 0, "c", "d", 1, 0, 0),
			},
			want: "[ab+cd ac]",
		},
		{
			name: "touching keys overlap",
			files: []DataFileMeta{
				testFile("x", 1, "a", "c", 1, 0, 0), testFile("y", 0, "c", "e", 1, 0, 0), testFile("z", 1, "f", "g", 1, 0, 0),
			},
			want: "[x y] [z]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sectionsString(partitionSections(bytes.Compare, tt.files)); got != tt.want {
				t.Fatalf("sections = %q, want %q", got, tt.want)
			}
		})
	}
}

func stepsString(p CompactPlan) string {
	var ss []string
	for _, s := range p.Steps {
		var x string
		switch s.Kind {
		case StepUpgrade:
			x = "up(" + s.File.FileName + ")"
		case StepRewrite:
			x = "rw" + sectionsString(s.Sections)
		}
		if s.Lookup {
			x += "+lookup"
		}
		ss = append(ss, x)
	}
	return fmt.Sprintf("L%d drop=%v %s", p.OutputLevel, p.DropDelete, strings.Join(ss, " "))
}

func TestPlanCompaction(t *testing.T) {
	deletes := func(f DataFileMeta, n *int64) DataFileMeta { f.DeleteRowCount = n; return f }
	one := int64(1)
	const small, large = 10, 1000
	tree := []DataFileMeta{testFile("deep", 5, "a", "z", 100000, 0, 0)}
	tests := []struct {
		name string
		dv   bool
		tree []DataFileMeta // files not in the unit
		unit CompactUnit
		want string
	}{
		{
			name: "barrier round: a level-0 file without deletes is upgraded with lookup", dv: true, tree: tree,
			unit: CompactUnit{OutputLevel: 4, Files: []DataFileMeta{testFile("n", 0, "b", "c", small, 9, 9)}},
			want: "L4 drop=true up(n)+lookup",
		},
		{
			name: "a level-0 file with deletes is rewritten with lookup", dv: true, tree: tree,
			unit: CompactUnit{OutputLevel: 4, Files: []DataFileMeta{deletes(testFile("n", 0, "b", "c", large, 9, 9), &one)}},
			want: "L4 drop=true rw[n]+lookup",
		},
		{
			name: "an unknown delete count counts as deletes", dv: true, tree: tree,
			unit: CompactUnit{OutputLevel: 4, Files: []DataFileMeta{deletes(testFile("n", 0, "b", "c", large, 9, 9), nil)}},
			want: "L4 drop=true rw[n]+lookup",
		},
		{
			name: "overlapping level-0 files are merged", dv: true, tree: tree,
			unit: CompactUnit{OutputLevel: 4, Files: []DataFileMeta{testFile("n1", 0, "b", "d", large, 9, 9), testFile("n0", 0, "c", "e", large, 8, 8)}},
			want: "L4 drop=true rw[n1 n0]+lookup",
		},
		{
			name: "rewriting only upper levels needs no lookup", dv: true,
			unit: CompactUnit{OutputLevel: 5, Files: []DataFileMeta{testFile("u3", 3, "b", "d", large, 1, 1), testFile("u5", 5, "c", "e", large, 0, 0)}},
			want: "L5 drop=true rw[u3 u5]",
		},
		{
			name: "without deletion vectors deletes are kept above older data", tree: tree,
			unit: CompactUnit{OutputLevel: 4, Files: []DataFileMeta{deletes(testFile("n", 0, "b", "c", large, 9, 9), &one)}},
			want: "L4 drop=false up(n)",
		},
		{
			name: "without deletion vectors a file with deletes headed for the max level is rewritten",
			unit: CompactUnit{OutputLevel: 5, Files: []DataFileMeta{deletes(testFile("n", 0, "b", "c", large, 9, 9), &one)}},
			want: "L5 drop=true rw[n]",
		},
		{
			name: "large file between small disjoint ones: all upgraded", dv: true, tree: tree,
			unit: CompactUnit{OutputLevel: 4, Files: []DataFileMeta{
				testFile("s1", 0, "a", "b", small, 3, 3), testFile("big", 0, "c", "d", large, 2, 2), testFile("s2", 0, "e", "f", small, 1, 1),
			}},
			want: "L4 drop=true up(s1)+lookup up(big)+lookup up(s2)+lookup",
		},
		{
			name: "small disjoint files and an overlapping pair are rewritten together", dv: true, tree: tree,
			unit: CompactUnit{OutputLevel: 4, Files: []DataFileMeta{
				testFile("s", 0, "a", "b", small, 3, 3), testFile("p", 0, "c", "e", small, 2, 2), testFile("q", 0, "d", "f", small, 1, 1),
			}},
			want: "L4 drop=true rw[s] [p q]+lookup",
		},
		{
			name: "a large file already at the output level stays", dv: true, tree: tree,
			unit: CompactUnit{OutputLevel: 4, Files: []DataFileMeta{testFile("n", 0, "a", "b", small, 3, 3), testFile("u4", 4, "c", "d", large, 1, 1)}},
			want: "L4 drop=true up(n)+lookup",
		},
		{
			name: "an upper-level file is upgraded without lookup", dv: true, tree: tree,
			unit: CompactUnit{OutputLevel: 4, Files: []DataFileMeta{testFile("u2", 2, "a", "b", large, 3, 3)}},
			want: "L4 drop=true up(u2)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := NewLevels(bytes.Compare, append(append([]DataFileMeta(nil), tt.tree...), tt.unit.Files...), 6)
			if err != nil {
				t.Fatal(err)
			}
			o := CompactionOptions{SmallFileSize: 100, DeletionVectors: tt.dv}
			if got := stepsString(PlanCompaction(bytes.Compare, tt.unit, l, o)); got != tt.want {
				t.Fatalf("plan = %q\nwant   %q", got, tt.want)
			}
		})
	}
}

func TestPlanCoversEveryUnitFile(t *testing.T) {
	// Every file of the unit is either upgraded, rewritten, or already at
	// the output level; none is dropped or doubled.
	var files []DataFileMeta
	for i := range 12 {
		lo := string(rune('a' + (i*7)%20))
		hi := string(rune('a' + (i*7)%20 + i%3))
		files = append(files, testFile(fmt.Sprintf("f%02d", i), 0, lo, hi, int64(50+i*20), int64(i), int64(i)))
	}
	l, err := NewLevels(bytes.Compare, files, 6)
	if err != nil {
		t.Fatal(err)
	}
	plan := PlanCompaction(bytes.Compare, CompactUnit{OutputLevel: 5, Files: files}, l, CompactionOptions{SmallFileSize: 150, DeletionVectors: true})
	var seen []string
	for _, s := range plan.Steps {
		if s.Kind == StepUpgrade {
			seen = append(seen, s.File.FileName)
		}
		for _, sec := range s.Sections {
			for _, r := range sec {
				seen = append(seen, names(r.Files)...)
			}
		}
	}
	want := names(files)
	slices.Sort(seen)
	slices.Sort(want)
	if !reflect.DeepEqual(seen, want) {
		t.Fatalf("plan covers %v, want %v", seen, want)
	}
}
