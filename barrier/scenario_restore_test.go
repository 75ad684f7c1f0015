package barrier_test

import (
	"slices"
	"testing"

	"github.com/lakestate/lakestate/barrier"
	"github.com/lakestate/lakestate/keygroup"
)

var backends = []string{barrier.BackendMemory, barrier.BackendPebble, barrier.BackendPaimon}

func forBackends(t *testing.T, fn func(t *testing.T, backend string)) {
	for _, b := range backends {
		t.Run(b, func(t *testing.T) { fn(t, b) })
	}
}

// State written after checkpoint 1 is absent when restoring checkpoint 1,
// and present when restoring checkpoint 2.
func TestPointInTimeIsolation(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
		cfg := jobConfig{backend: backend, parallelism: 2, retain: 2}
		j := startJob(t, blobs, fs, root, cfg)
		j.put(10, 1, 2, 3)
		c1 := j.mustComplete(barrier.KindCheckpoint)
		j.put(20, 2)
		j.put(30, 4)
		c2 := j.mustComplete(barrier.KindCheckpoint)
		m1, m2 := j.metadata(c1), j.metadata(c2)
		j.stop()

		for _, c := range []struct {
			m    *barrier.Metadata
			want []int64
		}{{m1, []int64{10, 10, 10, -1}}, {m2, []int64{10, 20, 10, 30}}} {
			cfg.restore = c.m
			r := startJob(t, blobs, fs, root, cfg)
			if got := r.get(1, 2, 3, 4); !slices.Equal(got, c.want) {
				t.Fatalf("restore of %d: %v, want %v", c.m.ID, got, c.want)
			}
			r.stop()
		}
	})
}

// A checkpoint taken at parallelism 1 over 10 key groups restores at
// parallelism 2 into [0,4] and [5,9], each subtask holding exactly the keys
// of its own half.
func TestKeyGroupSplitRestore(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
		j := startJob(t, blobs, fs, root, jobConfig{backend: backend, parallelism: 1, maxP: 10})
		keys := keysCoveringGroups(10, 3)
		for _, k := range keys {
			j.put(k*7, k)
		}
		j.mustComplete(barrier.KindCheckpoint)
		j.stop()

		r := startJob(t, blobs, fs, root, jobConfig{backend: backend, parallelism: 2, maxP: 10, restoreLatest: true})
		want := []keygroup.Range{{Start: 0, End: 4}, {Start: 5, End: 9}}
		checkOwnership(t, r, keys, want, func(k int64) (int64, bool) { return k * 7, true })
	})
}

// keysCoveringGroups returns perGroup keys of every key group in [0, maxP).
func keysCoveringGroups(maxP, perGroup int) []int64 {
	count := make([]int, maxP)
	var out []int64
	for k := int64(1); len(out) < maxP*perGroup; k++ {
		kg := keygroup.ForKeyHash(int32(k), maxP)
		if count[kg] < perGroup {
			count[kg]++
			out = append(out, k)
		}
	}
	return out
}

// checkOwnership asserts the exact key-group ranges of a job's tasks and
// that every key reads its value at exactly the task owning its group.
func checkOwnership(t *testing.T, j *job, keys []int64, ranges []keygroup.Range, value func(int64) (int64, bool)) {
	t.Helper()
	if len(j.tasks) != len(ranges) {
		t.Fatalf("%d tasks, want %d", len(j.tasks), len(ranges))
	}
	for i, tk := range j.tasks {
		if tk.kg != ranges[i] {
			t.Fatalf("task %d owns %v, want %v", i, tk.kg, ranges[i])
		}
		if len(j.restored) > 0 && j.restored[i].KeyGroups != ranges[i] {
			t.Fatalf("task %d restored %v, want %v", i, j.restored[i].KeyGroups, ranges[i])
		}
	}
	for _, k := range keys {
		kg := keygroup.ForKeyHash(int32(k), j.cfg.maxP)
		want, written := value(k)
		for _, tk := range j.tasks {
			v, ok := j.getAt(tk, k)
			switch {
			case tk.kg.Contains(kg) && (ok != written || v != want):
				t.Fatalf("key %d (group %d) at its owner %d: %d %t, want %d %t", k, kg, tk.idx, v, ok, want, written)
			case !tk.kg.Contains(kg) && ok:
				t.Fatalf("key %d (group %d) present at task %d owning %v", k, kg, tk.idx, tk.kg)
			}
		}
	}
}

// Rescale 1→2→3 and 3→2→1 (maximum parallelism 10) with Flink's exact
// ranges; each step writes more and checkpoints, and each key lives at its
// owner only.
func TestRescaleChain(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		for _, chain := range [][]int{{1, 2, 3}, {3, 2, 1}} {
			blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
			keys := keysCoveringGroups(10, 2)
			value := map[int64]int64{}
			var prev *job
			for step, p := range chain {
				cfg := jobConfig{backend: backend, parallelism: p, maxP: 10, restoreLatest: step > 0}
				if prev != nil {
					prev.stop()
				}
				j := startJob(t, blobs, fs, root, cfg)
				ranges, _ := keygroup.Ranges(10, p)
				checkOwnership(t, j, keys, ranges, func(k int64) (int64, bool) { v, ok := value[k]; return v, ok })
				for i, k := range keys {
					if step == 0 || i%(step+2) == 0 {
						value[k] = int64(100*step) + k
						j.put(value[k], k)
					}
				}
				j.mustComplete(barrier.KindCheckpoint)
				checkOwnership(t, j, keys, ranges, func(k int64) (int64, bool) { v, ok := value[k]; return v, ok })
				prev = j
			}
			prev.stop()
			if chain[0] == 1 {
				want := [][]keygroup.Range{{{Start: 0, End: 4}, {Start: 5, End: 9}}, {{Start: 0, End: 3}, {Start: 4, End: 6}, {Start: 7, End: 9}}}
				for i, p := range []int{2, 3} {
					got, _ := keygroup.Ranges(10, p)
					if !slices.Equal(got, want[i]) {
						t.Fatalf("ranges at %d: %v, want %v", p, got, want[i])
					}
				}
			}
		}
	})
}
