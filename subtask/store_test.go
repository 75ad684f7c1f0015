package subtask

import (
	"errors"
	"strings"
	"testing"

	"github.com/lakestate/lakestate/table"
)

// failingBackend fails the next commit when armed.
type failingBackend struct {
	*MemoryBackend
	fail bool
}

func (b *failingBackend) commit(c commitRequest) (Checkpoint, error) {
	if b.fail {
		b.fail = false
		return Checkpoint{}, errors.New("disk full")
	}
	return b.MemoryBackend.commit(c)
}

var testKey = []Column{{"k", table.BigInt().NotNull()}}

func ik(k int64) Key { return Key{Group: int32(k % 7), Cols: Row{Int(k)}} }

// A failed flush keeps the buffers: the next flush writes the same rows, and
// map images survive so the diff is still exact.
func TestFailedFlushKeepsTheBuffer(t *testing.T) {
	b := &failingBackend{MemoryBackend: NewMemory()}
	s := NewStore(b)
	v, err := s.Value(Layout{Name: "v", Key: testKey, Value: []Column{{"x", table.BigInt()}}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Map(Layout{Name: "m", Key: testKey, Sub: []Column{{"r", table.String().NotNull()}}, Value: []Column{{"c", table.BigInt()}}})
	if err != nil {
		t.Fatal(err)
	}
	v.Put(ik(1), Row{Int(1)})
	mes, _ := m.GetBatch([]Key{ik(1)}, nil)
	mes[0].Put(Row{Str("a")}, Row{Int(1)})
	mes[0].Put(Row{Str("b")}, Row{Int(1)})
	if _, err := s.Flush(1); err != nil {
		t.Fatal(err)
	}
	mes, _ = m.GetBatch([]Key{ik(1)}, nil)
	mes[0].Delete(Row{Str("a")})
	v.Put(ik(2), Row{Int(2)})
	b.fail = true
	if _, err := s.Flush(2); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("flush error %v", err)
	}
	if n := s.Buffered(); n != 2 {
		t.Fatalf("%d keys buffered after a failed flush, want 2", n)
	}
	cp, err := s.Flush(2)
	if err != nil {
		t.Fatal(err)
	}
	if tv, tm := cp.Tables[0], cp.Tables[1]; tv.Upserts != 1 || tm.Tombstones != 1 || tm.Upserts != 0 {
		t.Fatalf("retried flush wrote %+v and %+v", tv, tm)
	}
	r, err := RestoreMemory("retry", cp.State)
	if err != nil {
		t.Fatal(err)
	}
	s2 := NewStore(r)
	m2, _ := s2.Map(Layout{Name: "m", Key: testKey, Sub: []Column{{"r", table.String().NotNull()}}, Value: []Column{{"c", table.BigInt()}}})
	mes, _ = m2.GetBatch([]Key{ik(1)}, nil)
	if mes[0].Len() != 1 {
		t.Fatalf("restored map holds %d entries, want 1", mes[0].Len())
	}
}

// A flush of an older checkpoint id than the last one is refused.
func TestFlushRefusesAnOlderCheckpoint(t *testing.T) {
	s := NewStore(NewMemory())
	v, _ := s.Value(Layout{Name: "v", Key: testKey, Value: []Column{{"x", table.BigInt()}}})
	v.Put(ik(1), Row{Int(1)})
	if _, err := s.Flush(2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Flush(1); err == nil {
		t.Fatal("a flush of an older checkpoint id was accepted")
	}
	if _, err := s.Flush(2); err != nil {
		t.Fatalf("a repeated flush of the same id: %v", err)
	}
}

func TestLayoutValidation(t *testing.T) {
	s := NewStore(NewMemory())
	val := []Column{{"x", table.BigInt()}}
	for _, c := range []struct {
		reg  func() error
		want string
	}{
		{func() error { _, err := s.Value(Layout{Name: "a", Key: []Column{{"k", table.BigInt()}}}); return err }, "NOT NULL"},
		{func() error {
			_, err := s.Value(Layout{Name: "a", Key: []Column{{"ts", table.BigInt().NotNull()}}})
			return err
		}, "reserved"},
		{func() error {
			_, err := s.Value(Layout{Name: "a", Key: testKey, Value: []Column{{"_x", table.BigInt()}}})
			return err
		}, "reserved"},
		{func() error {
			_, err := s.Value(Layout{Name: "a", Key: testKey, Value: []Column{{"k", table.BigInt()}}})
			return err
		}, "repeated"},
		{func() error { _, err := s.Value(Layout{Name: "a/b", Key: testKey}); return err }, "name"},
		{func() error { _, err := s.Value(Layout{Name: "a"}); return err }, "no key"},
		{func() error { _, err := s.Map(Layout{Name: "a", Key: testKey, Value: val}); return err }, "entry-key"},
		{func() error { _, err := s.List(Layout{Name: "a", Key: testKey, Sub: testKey}); return err }, "Sub must be empty"},
		{func() error {
			_, err := s.Time(Layout{Name: "a", Key: testKey, Value: []Column{{"seq", table.BigInt()}}})
			return err
		}, "reserved"},
		{func() error { _, err := s.Value(Layout{Name: "a", Kind: KindMap, Key: testKey}); return err }, "registered as value"},
		{func() error { _, err := s.Value(Layout{Name: "a", Key: testKey, TTL: -1}); return err }, "negative TTL"},
	} {
		if err := c.reg(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error mentioning %q", err, c.want)
		}
	}
	if _, err := s.Value(Layout{Name: "a", Key: testKey, Value: val}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Value(Layout{Name: "a", Key: testKey, Value: val}); err == nil {
		t.Fatal("a state registered twice")
	}
}

// A list whose stored positions have a gap (a clip skipped an expired element)
// reads as its elements in position order, and a rewrite tombstones exactly
// the stored positions it does not reuse.
func TestListWithAGapInPositions(t *testing.T) {
	b := NewMemory()
	s := NewStore(b)
	l, err := s.List(Layout{Name: "l", Key: testKey, Value: []Column{{"x", table.BigInt()}}})
	if err != nil {
		t.Fatal(err)
	}
	prefix := string(l.l.AppendKey(nil, ik(1)))
	pos := func(p int64) string { return string(appendKeyDatum([]byte(prefix), table.BigInt(), Int(p))) }
	_, err = b.commit(commitRequest{writes: []tableWrite{{layout: l.l, table: l.t, rows: []mutation{
		{key: pos(0), vals: Row{Int(10)}}, {key: pos(2), vals: Row{Int(12)}}, {key: pos(5), vals: Row{Int(15)}},
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := l.GetBatch([]Key{ik(1)}, nil)
	if err != nil || len(got[0]) != 3 || got[0][1][0].Int() != 12 {
		t.Fatalf("list %v, %v", got, err)
	}
	l.Put(ik(1), []Row{{Int(10)}, {Int(11)}})
	rows, err := l.mutations()
	if err != nil {
		t.Fatal(err)
	}
	want := []mutation{{key: pos(1), vals: Row{Int(11)}}, {key: pos(2), delete: true}, {key: pos(5), delete: true}}
	if len(rows) != len(want) {
		t.Fatalf("flush rows %v, want %v", rows, want)
	}
	for i := range want {
		if rows[i].key != want[i].key || rows[i].delete != want[i].delete || !rows[i].vals.Equal(want[i].vals) {
			t.Fatalf("flush row %d = %+v, want %+v", i, rows[i], want[i])
		}
	}
}
