package subtask

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakestate/lakestate/table"
)

// A flush decodes each row's primary key only from the first column its
// bytes do not share with the previous row's key. Sorted keys that share
// every length of prefix, strings with escaped bytes among them, must come
// out of the record exactly as a whole decode of each key gives them.
func TestFlushKeysDecodeAfterSharedPrefix(t *testing.T) {
	l, err := newLayout(Layout{Name: "m", Kind: KindMap,
		Key:   []Column{{Name: "s", Type: table.String().NotNull()}, {Name: "k", Type: table.BigInt().NotNull()}},
		Sub:   []Column{{Name: "e", Type: table.Bytes().NotNull()}, {Name: "i", Type: table.Int().NotNull()}},
		Value: []Column{{Name: "v", Type: table.BigInt()}}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := newPaimonCodec(l)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(6, 7))
	strs := []string{"", "a", "a\x00", "a\x00\x00", "a\x00b", "a\x01", "ab", "b", "\x00", "\xff\x00"}
	seen := map[string]bool{}
	var rows []mutation
	for len(rows) < 2000 {
		key := Key{Group: int32(rng.IntN(3)), Cols: Row{Str(strs[rng.IntN(len(strs))]), Int(int64(rng.IntN(4)) - 2)}}
		sub := Row{Bytes([]byte(strs[rng.IntN(len(strs))])), Int(int64(rng.IntN(3)))}
		enc := string(l.appendSub(l.AppendKey(nil, key), sub))
		if seen[enc] {
			continue
		}
		seen[enc] = true
		rows = append(rows, mutation{key: enc, delete: rng.IntN(5) == 0, vals: Row{Int(int64(len(rows)))}})
	}
	sortMutations(rows)
	for range 2 { // the second flush starts from the first one's last key
		rec, _, err := c.writeRecord(rows)
		if err != nil {
			t.Fatal(err)
		}
		want := make(Row, len(l.pkTypes))
		got := make(Row, len(l.pkTypes))
		for i, m := range rows {
			if err := l.decodePK(want, m.key); err != nil {
				t.Fatal(err)
			}
			for j := range got {
				switch col := rec.Column(j).(type) {
				case *array.Int32:
					got[j] = Int(int64(col.Value(i)))
				case *array.Int64:
					got[j] = Int(col.Value(i))
				case *array.String:
					got[j] = Str(col.Value(i))
				case *array.Binary:
					got[j] = Bytes(col.Value(i))
				default:
					t.Fatalf("column %d is %T", j, col)
				}
			}
			if !got.Equal(want) {
				t.Fatalf("row %d (key %q): record holds %v, the key decodes to %v", i, m.key, got, want)
			}
		}
		rec.Release()
	}
}

func TestCommonPrefixLen(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 0}, {"abc", "abc", 3}, {"abc", "abd", 2},
		{"0123456789", "0123456789", 10}, {"0123456789", "0123456780", 9},
		{"01234567", "01234568", 7}, {"0123456", "01234567", 7}, {"x1234567abc", "y1234567abc", 0},
		{"0123456789abcdef0", "0123456789abcdef1", 16},
	} {
		if got := commonPrefixLen(c.a, c.b); got != c.want {
			t.Errorf("commonPrefixLen(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := commonPrefixLen(c.b, c.a); got != c.want {
			t.Errorf("commonPrefixLen(%q, %q) = %d, want %d", c.b, c.a, got, c.want)
		}
	}
}
