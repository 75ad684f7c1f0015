package runtime

import (
	"fmt"

	"github.com/lakestate/lakestate/subtask"
)

// keyBatch builds the state keys of a batch: each record's key group (set
// by the keyed exchange) and its key columns.
type keyBatch struct {
	spec keySpec
	// span: the key columns are consecutive and ascending, so a key's
	// columns are a slice of its row.
	span bool
	flat []Datum
	keys []subtask.Key
}

func newKeyBatch(spec keySpec) *keyBatch {
	return &keyBatch{spec: spec, span: consecutive(spec.cols)}
}

// consecutive reports whether cols are consecutive and ascending, so that
// they are a slice of a row.
func consecutive(cols []int) bool {
	for i := 1; i < len(cols); i++ {
		if cols[i] != cols[i-1]+1 {
			return false
		}
	}
	return len(cols) > 0
}

// of returns the keys of recs; they stay valid until the next call.
func (k *keyBatch) of(recs []Record) ([]subtask.Key, error) {
	k.keys = k.keys[:0]
	n := len(k.spec.cols)
	if !k.span {
		k.flat = k.flat[:0]
	}
	for _, r := range recs {
		if r.KeyGroup < 0 {
			return nil, fmt.Errorf("record without key group reached a keyed operator")
		}
		var cols Row
		if k.span {
			cols = r.Row[k.spec.cols[0] : k.spec.cols[0]+n]
		} else {
			at := len(k.flat)
			for _, c := range k.spec.cols {
				k.flat = append(k.flat, r.Row[c])
			}
			cols = k.flat[at : at+n : at+n]
		}
		for _, d := range cols {
			if d.IsNull() {
				return nil, fmt.Errorf("NULL in key columns %v", k.spec.cols)
			}
		}
		k.keys = append(k.keys, subtask.Key{Group: r.KeyGroup, Cols: cols})
	}
	if !k.span {
		// flat may have moved while growing: re-slice every key into it.
		for i := range k.keys {
			k.keys[i].Cols = k.flat[i*n : (i+1)*n : (i+1)*n]
		}
	}
	return k.keys, nil
}

// columns names and types the given columns of a schema for a state layout:
// name prefix plus position, so that a layout never depends on a stream's
// column names. Key columns are NOT NULL, value columns nullable.
func columns(prefix string, s Schema, cols []int, key bool) []subtask.Column {
	out := make([]subtask.Column, len(cols))
	for i, c := range cols {
		t := s[c].Type
		t.Nullable = !key
		out[i] = subtask.Column{Name: fmt.Sprintf("%s%d", prefix, i), Type: t}
	}
	return out
}

// allColumns lists 0..n-1.
func allColumns(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
