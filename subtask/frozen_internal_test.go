package subtask

import "testing"

func TestFoldRows(t *testing.T) {
	m := func(key string, v int64, del bool) mutation {
		if del {
			return mutation{key: key, delete: true}
		}
		return mutation{key: key, vals: Row{Int(v)}}
	}
	older := []mutation{m("a", 1, false), m("c", 3, false), m("d", 0, true), m("f", 6, false)}
	newer := []mutation{m("b", 20, false), m("c", 0, true), m("d", 40, false), m("g", 70, false)}
	got := foldRows(newer, older)
	want := []mutation{m("a", 1, false), m("b", 20, false), m("c", 0, true), m("d", 40, false), m("f", 6, false), m("g", 70, false)}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].key != want[i].key || got[i].delete != want[i].delete || !got[i].vals.Equal(want[i].vals) {
			t.Fatalf("row %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if got := foldRows(newer, nil); len(got) != len(newer) {
		t.Fatalf("fold over nothing: %d rows", len(got))
	}
}
