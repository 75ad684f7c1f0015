package barrier

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

var heapLayout = subtask.Layout{
	Name:  "h",
	Kind:  subtask.KindValue,
	Key:   []subtask.Column{{Name: "k", Type: table.BigInt().NotNull()}},
	Value: []subtask.Column{{Name: "v", Type: table.String()}},
}

// heapInterval is what one checkpoint interval of heapRun does: it writes
// fresh keys and reads keys from all over the state, as an operator whose
// state grows would.
const (
	heapFreshKeys = 4_000
	heapReadKeys  = 2_000
)

// heapRun takes intervals checkpoints through a paimon Store actor on sys,
// each after one interval of writes and reads, and returns the heap the
// store retains after the last one: the live heap with the store open, less
// the live heap once it is closed and gone. It closes sys, which the caller
// keeps reachable until every measurement is done: a closed protoactor
// system (its process registry alone is megabytes) stays reachable for up
// to a second from its dead-letter throttle's goroutine, so one that turned
// to garbage between two measurements would count as heap the store kept.
func heapRun(t *testing.T, sys *actors.System, intervals int) uint64 {
	t.Helper()
	dir := t.TempDir()
	pb, err := subtask.OpenPaimon(filepath.Join(dir, "paimon"), subtask.PaimonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	held := heapIntervals(t, sys, pb, dir, intervals)
	if err := pb.Close(); err != nil {
		t.Fatal(err)
	}
	released := liveHeap()
	if held < released {
		return 0
	}
	return held - released
}

// heapIntervals runs the checkpoints of heapRun on pb and returns the live
// heap after the last one, with the store still open and sys closed.
func heapIntervals(t *testing.T, sys *actors.System, pb *subtask.PaimonBackend, dir string, intervals int) uint64 {
	t.Helper()
	fio := table.NewLocalFileIO()
	closed := false
	defer func() {
		if !closed {
			sys.Close()
		}
	}()
	store := subtask.NewStore(pb)
	v, err := store.Value(heapLayout)
	if err != nil {
		t.Fatal(err)
	}
	pid, coord, syncs := spawnPaimonStoreActor(t, sys, fio, dir, "heap", 5*time.Minute)

	key := func(k int64) subtask.Key {
		return subtask.Key{Group: int32(keygroup.ForKeyHash(int32(k), 128)), Cols: subtask.Row{subtask.Int(k)}}
	}
	payload := strings.Repeat("x", 100)
	rng := rand.New(rand.NewPCG(1, uint64(intervals)))
	keys := make([]subtask.Key, heapReadKeys)
	var out []subtask.Row
	for i := range intervals {
		written := int64(i * heapFreshKeys)
		if written > 0 {
			for j := range keys {
				keys[j] = key(rng.Int64N(written))
			}
			if out, err = v.GetBatch(keys, out[:0]); err != nil {
				t.Fatal(err)
			}
			for j, r := range out {
				if r == nil {
					t.Fatalf("interval %d: key %v written before reads as absent", i, keys[j].Cols)
				}
			}
			store.EndBatch()
		}
		for k := written; k < written+heapFreshKeys; k++ {
			v.Put(key(k), subtask.Row{subtask.Str(fmt.Sprintf("%d-%s", k, payload))})
		}
		id := CheckpointID(i + 1)
		sys.Send(pid, &Barrier{ID: id, Kind: KindCheckpoint, Store: store, ReplyTo: syncs.PID()})
		sd, err := actors.Expect[*SyncDone](syncs)
		if err != nil || sd.Err != nil {
			t.Fatalf("checkpoint %d: %v %v", id, err, sd)
		}
		if _, err := actors.Expect[*Ack](coord); err != nil {
			t.Fatal(err)
		}
		sys.Send(pid, &Complete{ID: id, Kind: KindCheckpoint})
	}
	// Maintenance shapes the table between barriers; its jobs are done
	// once the store actor (the maintainers are its children) has stopped
	// and the system has closed, and what is left is what the store keeps
	// until the next barrier: its buffers and the view its reads use.
	stopped, err := actors.NewProbe(sys, "stopped")
	if err != nil {
		t.Fatal(err)
	}
	stopped.SetWait(5 * time.Minute)
	stopped.Watch(pid)
	sys.Stop(pid)
	if _, err := actors.Expect[*actor.Terminated](stopped); err != nil {
		t.Fatal(err)
	}
	sys.Close()
	closed = true
	held := liveHeap()
	runtime.KeepAlive(store)
	return held
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC() // a second cycle frees what the first one's finalizers and pools let go
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestPaimonStoreHeapBoundedByInterval checks that what a paimon store
// keeps in memory between checkpoints is bounded by what one interval
// writes and reads, not by the state it holds: four times the intervals,
// each writing as many fresh keys and reading as many old ones, leave about
// the same heap behind.
func TestPaimonStoreHeapBoundedByInterval(t *testing.T) {
	const n = 5
	var systems []*actors.System
	run := func(intervals int) uint64 {
		sys := actors.NewSystem(actors.Options{})
		systems = append(systems, sys)
		return heapRun(t, sys, intervals)
	}
	run(2) // the process's first allocations: pools, codecs, caches
	small := run(n)
	large := run(4 * n)
	runtime.KeepAlive(systems)
	t.Logf("retained after %d intervals: %d KiB; after %d: %d KiB (%d fresh keys and %d reads per interval)",
		n, small>>10, 4*n, large>>10, heapFreshKeys, heapReadKeys)
	// A floor keeps the ratio meaningful when both are small.
	if floor := uint64(1 << 20); large > floor && float64(large) > 1.5*float64(max(small, floor)) {
		t.Errorf("retained heap grows with the state: %d KiB after %d intervals, %d KiB after %d", small>>10, n, large>>10, 4*n)
	}
}
