package table

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestCompactRandomRounds drives a deletion-vector bucket through random
// commits, barrier rounds (level 0 forced up) and universal shaping rounds,
// checking the bucket's invariants after every compaction and, whenever
// level 0 is empty, that a read returns exactly the model's rows.
func TestCompactRandomRounds(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { randomRounds(t, seed) })
	}
}

func randomRounds(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0))
	o := CompactionOptions{
		NumLevels: 3 + rng.IntN(4), NumSortedRunTrigger: 2 + rng.IntN(4),
		MaxSizeAmplificationPercent: 100 + rng.IntN(200), SizeRatio: rng.IntN(5),
		SmallFileSize: int64(rng.IntN(8)), DeletionVectors: true,
	}
	b := newMemBucket()
	b.rollRows = 2 + rng.IntN(6)
	l, err := NewLevels(bytes.Compare, nil, o.NumLevels)
	if err != nil {
		t.Fatal(err)
	}
	dvs := DeletionVectors{}
	model := map[string]string{}
	seq := int64(0)
	keySpace := 5 + rng.IntN(30)
	for round := range 60 {
		// One commit: a level-0 file of unique keys, some deletes.
		rows := map[string]memRow{}
		for range 1 + rng.IntN(8) {
			k := fmt.Sprintf("k%02d", rng.IntN(keySpace))
			if rng.IntN(4) == 0 {
				rows[k] = del(k, seq)
			} else {
				rows[k] = ins(k, seq, fmt.Sprintf("v%d", seq))
			}
			seq++
		}
		var rs []memRow
		for k, r := range rows {
			rs = append(rs, r)
			if r.kind.IsRetract() {
				delete(model, k)
			} else {
				model[k] = r.val
			}
		}
		if err := l.Apply(nil, []DataFileMeta{b.file(fmt.Sprintf("c%d", round), 0, rs...)}); err != nil {
			t.Fatal(err)
		}
		if rng.IntN(3) > 0 { // some barriers skip their round, leaving level 0 to pile up
			_, dvs = compactRound(t, b, l, dvs, o)
			if len(l.Level0()) != 0 {
				t.Fatalf("round %d: level 0 not empty after a barrier round", round)
			}
			if got := b.visibleRows(l, dvs); !reflect.DeepEqual(got, model) {
				t.Fatalf("round %d: read %v\nmodel %v", round, got, model)
			}
		}
		if rng.IntN(2) == 0 {
			if unit, ok := o.Universal().Pick(l.NumLevels(), l.SortedRuns()); ok {
				dvs = compactUnit(t, b, l, dvs, unit, o).DVs
			}
		}
	}
}
