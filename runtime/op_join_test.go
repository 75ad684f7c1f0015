package runtime

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// joinLog gathers a join's output as "kind row" lines.
type joinLog struct{ lines []string }

func (l *joinLog) Emit(k Change, r Row) {
	v := make([]string, len(r))
	for i, d := range r {
		if d.Str() != "" {
			v[i] = d.Str()
		} else {
			v[i] = fmt.Sprint(d.Int())
		}
	}
	l.lines = append(l.lines, k.String()+" "+strings.Join(v, ","))
}

func (l *joinLog) take() string {
	s := strings.Join(l.lines, "; ")
	l.lines = nil
	return s
}

// newTestJoinOp opens a join of [k, id, v] rows on k on a memory store:
// the left side unique by id, the right side by whole rows.
func newTestJoinOp(t *testing.T) (*joinOp, *subtask.Store) {
	t.Helper()
	in := Schema{{Name: "k", Type: table.BigInt()}, {Name: "id", Type: table.BigInt()}, {Name: "v", Type: table.String()}}
	var sides [2]*joinSide
	for s, ji := range []JoinInput{{Key: []int{0}, Unique: []int{1}}, {Key: []int{0}}} {
		side, err := newJoinSide(s, in, ji)
		if err != nil {
			t.Fatal(err)
		}
		sides[s] = side
	}
	sel := []JoinColumn{{Col: 1}, {Col: 2}, {Right: true, Col: 1}, {Right: true, Col: 2}}
	op := &joinOp{spec: &joinSpec{name: "j", sides: sides, width: len(sel), spans: joinSpans(sel)}}
	store := subtask.NewStore(subtask.NewMemory())
	if err := op.Open(&OperatorContext{Store: store, KeyGroups: keygroup.Range{Start: 0, End: 127}}); err != nil {
		t.Fatal(err)
	}
	return op, store
}

func jrec(kind Change, k, id int64, v string) Record {
	return Record{Kind: kind, KeyGroup: int32(k % 128), Row: Row{subtask.Int(k), subtask.Int(id), subtask.Str(v)}}
}

// A side with Unique columns holds one row per unique value: an add of a
// held value replaces the row, a retraction removes it whatever its other
// columns, and a retraction of a value not held fails. A side without
// counts duplicates. Rows join as they arrive, in one batch or across.
func TestJoinUniqueSideReplacesAndRetracts(t *testing.T) {
	op, store := newTestJoinOp(t)
	var out joinLog
	step := func(input int, want string, recs ...Record) {
		t.Helper()
		if err := op.Process(input, recs, &out); err != nil {
			t.Fatal(err)
		}
		store.EndBatch()
		if got := out.take(); got != want {
			t.Fatalf("output %q, want %q", got, want)
		}
	}
	step(1, "", jrec(Insert, 1, 7, "r"), jrec(Insert, 1, 7, "r"))
	step(0, "+I 1,a,7,r; +I 1,a,7,r; +I 1,b,7,r; +I 1,b,7,r; +I 2,c,7,r; +I 2,c,7,r",
		jrec(Insert, 1, 1, "a"), jrec(Insert, 1, 1, "b"), jrec(Insert, 1, 2, "c"))
	// Id 1 holds its last row, b: the right side's duplicate finds it once
	// per copy it adds.
	step(1, "+I 1,b,8,s; +I 2,c,8,s", jrec(Insert, 1, 8, "s"))
	step(0, "-D 1,x,7,r; -D 1,x,7,r; -D 1,x,8,s", jrec(Delete, 1, 1, "x"))
	step(1, "-D 2,c,7,r", jrec(Delete, 1, 7, "r"))
	step(1, "+I 2,c,9,t", jrec(UpdateAfter, 1, 9, "t"))
	if err := op.Process(0, []Record{jrec(UpdateBefore, 1, 1, "a")}, &out); err == nil || !strings.Contains(err.Error(), "does not hold") {
		t.Fatalf("retraction of a row not held: %v", err)
	}
	store.EndBatch()
}

// A unique side keeps the row it was given, not a copy: rows are
// immutable once emitted.
func TestJoinUniqueSideKeepsTheInputRow(t *testing.T) {
	op, store := newTestJoinOp(t)
	r := jrec(Insert, 3, 5, "v")
	if err := op.Process(0, []Record{r}, &joinLog{}); err != nil {
		t.Fatal(err)
	}
	store.EndBatch()
	keys, _, err := op.keys[0].of([]Record{r})
	if err != nil {
		t.Fatal(err)
	}
	mes, err := op.states[0].GetBatch(keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	if mes[0].Len() != 1 {
		t.Fatalf("%d entries", mes[0].Len())
	}
	sub, value := mes[0].At(0)
	if &value[0] != &r.Row[0] || &sub[0] != &r.Row[1] {
		t.Fatalf("entry (%v, %v) is a copy of the input row", sub, value)
	}
	store.EndBatch()
}

// distinctKeys numbers a batch's keys in order of first appearance, tells
// keys apart by key group and by every column, and frees its table for the
// next batch.
func TestDistinctKeys(t *testing.T) {
	str, i64 := table.String(), table.BigInt()
	schema := Schema{{Name: "a", Type: i64}, {Name: "s", Type: str}, {Name: "b", Type: i64}}
	for _, cols := range [][]int{{0}, {0, 1}, {2, 0}, {1}} {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			spec, err := newKeySpec(schema, cols)
			if err != nil {
				t.Fatal(err)
			}
			d := newDistinctKeys(spec)
			for batch, n := range []int{300, 5, 1000, 1} {
				var recs []Record
				for i := range n {
					v := int64(i*7+batch) % 41
					recs = append(recs, Record{KeyGroup: int32(v % 3), Row: Row{
						subtask.Int(v % 5), subtask.Str(fmt.Sprint("s", v%7)), subtask.Int(v)}})
				}
				keys, of, err := d.of(recs)
				if err != nil {
					t.Fatal(err)
				}
				if len(of) != len(recs) {
					t.Fatalf("%d indexes for %d records", len(of), len(recs))
				}
				// The model: a key is its group and its columns' values.
				name := func(r Record) string {
					s := fmt.Sprint(r.KeyGroup)
					for _, c := range cols {
						s += "/" + fmt.Sprint(r.Row[c])
					}
					return s
				}
				var want []string
				for _, r := range recs {
					if !slices.Contains(want, name(r)) {
						want = append(want, name(r))
					}
				}
				if len(keys) != len(want) {
					t.Fatalf("batch %d: %d keys, want %d", batch, len(keys), len(want))
				}
				for i, r := range recs {
					k := keys[of[i]]
					if name(r) != want[of[i]] || k.Group != r.KeyGroup {
						t.Fatalf("batch %d: record %d (%s) has key %d, %s", batch, i, name(r), of[i], want[of[i]])
					}
					for j, c := range cols {
						if k.Cols[j] != r.Row[c] {
							t.Fatalf("batch %d: key %d column %d is %v, want %v", batch, of[i], j, k.Cols[j], r.Row[c])
						}
					}
				}
			}
			if _, _, err := d.of([]Record{{KeyGroup: 0, Row: Row{subtask.Null, subtask.Null, subtask.Null}}}); err == nil {
				t.Fatal("NULL key accepted")
			}
			if _, _, err := d.of([]Record{{KeyGroup: -1, Row: Row{subtask.Int(1), subtask.Str("x"), subtask.Int(1)}}}); err == nil {
				t.Fatal("record without key group accepted")
			}
		})
	}
}
