package runtime

import (
	"slices"
	"testing"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// reusingSource is a RowsSource whose reader builds every row of a Borrowed
// output in one row, as a generator may, and records the uses it was
// opened with.
type reusingSource struct {
	RowsSource
	uses []OutputUse
}

func (s *reusingSource) Open(split int, offset int64, uses []OutputUse) (SplitReader, error) {
	s.uses = slices.Clone(uses)
	r, err := s.RowsSource.Open(split, offset, uses)
	if err != nil || uses[0].Rows != Borrowed {
		return r, err
	}
	return &reusingReader{SplitReader: r, row: make(Row, len(s.Schema))}, nil
}

type reusingReader struct {
	SplitReader
	row Row
}

func (r *reusingReader) Read(n int, emit func(int, Row)) (ReadStatus, error) {
	return r.SplitReader.Read(n, func(out int, row Row) {
		reused := r.row[:copy(r.row, row)]
		emit(out, reused)
		clear(reused)
	})
}

// A projection that every consumer of a source output starts with is the
// reader's to make. A source output whose every consumer projects first
// (after that) is Borrowed: a reader that builds all its rows in one row
// still yields the right output. One consumer that takes the rows as they
// are makes the output Kept.
func TestSourceOutputUse(t *testing.T) {
	var rows []Row
	for i := range 50 {
		rows = append(rows, Row{subtask.Int(int64(i % 3)), subtask.Int(int64(i))})
	}
	schema := Schema{{Name: "k", Type: table.BigInt().NotNull()}, {Name: "v", Type: table.BigInt().NotNull()}}
	for _, c := range []struct {
		name  string
		build func(in Stream) Stream
		want  OutputUse
	}{
		{"project", func(in Stream) Stream { return in.Project(0) }, OutputUse{Rows: Kept, Columns: []int{0}}},
		{"project twice", func(in Stream) Stream { return in.Project(1, 0).Project(1) }, OutputUse{Rows: Borrowed, Columns: []int{1, 0}}},
		{"project, filter, project", func(in Stream) Stream {
			return in.Project(1, 0).Filter(func(r Row) bool { return r[0].Int() >= 0 }).Project(1)
		}, OutputUse{Rows: Borrowed, Columns: []int{1, 0}}},
		{"project then filter", func(in Stream) Stream {
			return in.Project(0, 1).Filter(func(r Row) bool { return r[1].Int() >= 0 })
		}, OutputUse{Rows: Kept, Columns: []int{0, 1}}},
		{"filter then project", func(in Stream) Stream {
			return in.Filter(func(r Row) bool { return r[1].Int() >= 0 }).Project(0)
		}, OutputUse{Rows: Borrowed}},
		{"as is", func(in Stream) Stream { return in }, OutputUse{Rows: Kept}},
		{"filter", func(in Stream) Stream { return in.Filter(func(Row) bool { return true }) }, OutputUse{Rows: Kept}},
		{"map then project", func(in Stream) Stream {
			return in.Map(schema, func(r Row) Row { return r }).Project(0)
		}, OutputUse{Rows: Kept}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sys := actors.NewSystem(actors.Options{})
			defer sys.Close()
			src := &reusingSource{RowsSource: RowsSource{Schema: schema, Rows: [][]Row{rows}}}
			g := NewGraph()
			in := g.Source("in", src)[0]
			out := NewChangelogTable()
			Aggregate("count", c.build(in), []int{0}, Count("n")).Sink("out", out)
			run, err := Start(sys, g, Options{BatchSize: 7})
			if err != nil {
				t.Fatal(err)
			}
			if err := run.Wait(); err != nil {
				t.Fatal(err)
			}
			src.checkOpenedWith(t, c.want)
			counts := countsByKey(t, out)
			if want := map[int64]int64{0: 17, 1: 17, 2: 16}; len(counts) != len(want) ||
				counts[0] != want[0] || counts[1] != want[1] || counts[2] != want[2] {
				t.Fatalf("counts %v, want %v", counts, want)
			}
		})
	}
}

// Two consumers of one source output: the reader makes their projection
// when both start with the same one, and not when they differ (each then
// projects a borrowed row). Both consumers see every row either way.
func TestSourceProjectionOfTwoConsumers(t *testing.T) {
	var rows []Row
	for i := range 50 {
		rows = append(rows, Row{subtask.Int(int64(i % 3)), subtask.Int(int64(i))})
	}
	schema := Schema{{Name: "k", Type: table.BigInt().NotNull()}, {Name: "v", Type: table.BigInt().NotNull()}}
	for _, c := range []struct {
		name   string
		second []int // the second consumer's projection; the first's is [0]
		want   OutputUse
	}{
		{"same projection", []int{0}, OutputUse{Rows: Kept, Columns: []int{0}}},
		{"other projection", []int{1, 0}, OutputUse{Rows: Borrowed}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sys := actors.NewSystem(actors.Options{})
			defer sys.Close()
			src := &reusingSource{RowsSource: RowsSource{Schema: schema, Rows: [][]Row{rows}}}
			g := NewGraph()
			in := g.Source("in", src)[0]
			outs := []*ChangelogTable{NewChangelogTable(), NewChangelogTable()}
			Aggregate("first", in.Project(0), []int{0}, Count("n")).Sink("out0", outs[0])
			second := in.Project(c.second...)
			Aggregate("second", second, []int{len(c.second) - 1}, Count("n")).Sink("out1", outs[1])
			run, err := Start(sys, g, Options{BatchSize: 7})
			if err != nil {
				t.Fatal(err)
			}
			if err := run.Wait(); err != nil {
				t.Fatal(err)
			}
			src.checkOpenedWith(t, c.want)
			for i, out := range outs {
				counts := countsByKey(t, out)
				if len(counts) != 3 || counts[0] != 17 || counts[1] != 17 || counts[2] != 16 {
					t.Fatalf("consumer %d: counts %v, want 0:17 1:17 2:16", i, counts)
				}
			}
		})
	}
}

// checkOpenedWith fails the test unless the source was opened once, with
// want as its output's use.
func (s *reusingSource) checkOpenedWith(t *testing.T, want OutputUse) {
	t.Helper()
	if len(s.uses) != 1 || s.uses[0].Rows != want.Rows || !slices.Equal(s.uses[0].Columns, want.Columns) ||
		(s.uses[0].Columns == nil) != (want.Columns == nil) {
		t.Fatalf("opened with uses %v, want [%v]", s.uses, want)
	}
}

// countsByKey is a [key, count] changelog table's rows as a map.
func countsByKey(t *testing.T, out *ChangelogTable) map[int64]int64 {
	t.Helper()
	got, err := out.Rows()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[int64]int64{}
	for _, r := range got {
		counts[r[0].Int()] = r[1].Int()
	}
	return counts
}
