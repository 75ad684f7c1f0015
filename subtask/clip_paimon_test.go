package subtask_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

func namedLayout(ttl int64) subtask.Layout {
	return subtask.Layout{
		Name:  "named",
		Key:   bigintKey,
		Value: []subtask.Column{{Name: "n", Type: table.BigInt()}, {Name: "s", Type: table.String()}},
		TTL:   ttl,
	}
}

// A paimon clip merges many sorted runs per source (buckets of merged rows
// interleave in key order): every live key of the range lands once with its
// newest value, NULL values stay NULL, and deleted and expired keys are gone.
// Sources whose ranges overlap are refused.
func TestPaimonClipMergesSortedRuns(t *testing.T) {
	const n = 600
	open := func(t *testing.T, buckets int) *subtask.PaimonBackend {
		b, err := subtask.OpenPaimon(filepath.Join(t.TempDir(), "state"), subtask.PaimonOptions{NoDeletionVectors: true, Buckets: buckets})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	want := map[int64]subtask.Row{}
	var sources []subtask.Backend
	for i := 0; i < 2; i++ {
		b := open(t, 3)
		s := subtask.NewStore(b)
		v := must[*subtask.ValueState](t)(s.Value(namedLayout(1000)))
		mine := keygroup.RangeForSubtask(maxParallelism, 2, i)
		for round := int64(0); round < 3; round++ {
			s.SetNow(4000 + round*100)
			for k := int64(0); k < n; k++ {
				if !mine.Contains(int(kgOf(k))) || k%(round+2) != 0 {
					continue
				}
				r := subtask.Row{subtask.Int(k*10 + round), subtask.Str("v")}
				if k%7 == 0 {
					r[1] = subtask.Null
				}
				v.Put(key(k), r)
				want[k] = r
			}
			if round == 2 {
				for k := int64(0); k < n; k += 11 {
					if mine.Contains(int(kgOf(k))) {
						v.Delete(key(k))
						delete(want, k)
					}
				}
			}
			s.EndBatch()
			must[subtask.Checkpoint](t)(s.Flush(round + 1))
		}
		sources = append(sources, b)
	}
	// Rows last written at 4000 expire at 5000; the rest live.
	expiredAt := func(k int64) bool { return k%3 != 0 && k%4 != 0 }

	const p = 3
	seen := map[int64]int{}
	all := make([]int64, n)
	for k := range all {
		all[k] = int64(k)
	}
	for i := 0; i < p; i++ {
		s := subtask.NewStore(open(t, 2))
		s.SetNow(5000)
		v := must[*subtask.ValueState](t)(s.Value(namedLayout(1000)))
		r := keygroup.RangeForSubtask(maxParallelism, p, i)
		if err := s.Clip(sources, r); err != nil {
			t.Fatal(err)
		}
		got := must[[]subtask.Row](t)(v.GetBatch(keys(all...), nil))
		for k, row := range got {
			k := int64(k)
			w, live := want[k]
			live = live && !expiredAt(k) && r.Contains(int(kgOf(k)))
			switch {
			case live && (row == nil || !row.Equal(w)):
				t.Fatalf("subtask %d: key %d reads %v, want %v", i, k, row, w)
			case !live && row != nil:
				t.Fatalf("subtask %d: key %d reads %v, want nothing", i, k, row)
			case row != nil:
				seen[k]++
			}
		}
		s.EndBatch()
	}
	for k, w := range want {
		if !expiredAt(k) && seen[k] != 1 {
			t.Fatalf("key %d (%v) restored %d times", k, w, seen[k])
		}
	}
	if len(seen) == 0 {
		t.Fatal("no key survived")
	}

	s := subtask.NewStore(open(t, 1))
	s.SetNow(5000)
	must[*subtask.ValueState](t)(s.Value(namedLayout(1000)))
	err := s.Clip([]subtask.Backend{sources[0], sources[0]}, keygroup.Range{Start: 0, End: maxParallelism - 1})
	if err == nil || !strings.Contains(err.Error(), "same key") {
		t.Fatalf("clip of overlapping sources: %v", err)
	}
}
