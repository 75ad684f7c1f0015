package subtask_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// backendCase is one backend the scenario suite runs against.
type backendCase struct {
	name string
	// fresh returns an empty backend.
	fresh func(t testing.TB) subtask.Backend
	// restore returns a backend holding the state of checkpoint cp, which b
	// produced; b is not used afterwards.
	restore func(t *testing.T, b subtask.Backend, cp subtask.Checkpoint) subtask.Backend
}

var backendCases = []backendCase{
	{
		name:  "memory",
		fresh: func(testing.TB) subtask.Backend { return subtask.NewMemory() },
		restore: func(t *testing.T, b subtask.Backend, cp subtask.Checkpoint) subtask.Backend {
			r, err := subtask.RestoreMemory("test", cp.State)
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
	},
	{
		name: "pebble",
		fresh: func(t testing.TB) subtask.Backend {
			dir := t.TempDir()
			b, err := subtask.OpenPebble(filepath.Join(dir, "db"), subtask.PebbleOptions{
				MemTableSize:  1 << 20,
				CheckpointDir: func(id int64) string { return filepath.Join(dir, fmt.Sprintf("chk-%d", id)) },
			})
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
		restore: func(t *testing.T, b subtask.Backend, cp subtask.Checkpoint) subtask.Backend {
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			// Restore from a copy of the checkpoint, as a download would.
			dir := t.TempDir()
			if err := os.CopyFS(filepath.Join(dir, "db"), os.DirFS(cp.Dir)); err != nil {
				t.Fatal(err)
			}
			r, err := subtask.OpenPebble(filepath.Join(dir, "db"), subtask.PebbleOptions{
				CheckpointDir: func(id int64) string { return filepath.Join(dir, fmt.Sprintf("chk-%d", id)) },
			})
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
	},
}

func forEachBackend(t *testing.T, fn func(t *testing.T, bc backendCase)) {
	for _, bc := range backendCases {
		t.Run(bc.name, func(t *testing.T) { fn(t, bc) })
	}
}

const maxParallelism = keygroup.DefaultMaxParallelism

// kgOf is the key group of an integer key.
func kgOf(k int64) int32 {
	return int32(keygroup.ForKeyHash(int32(k)^int32(k>>32), maxParallelism))
}

func key(k int64) subtask.Key {
	return subtask.Key{Group: kgOf(k), Cols: subtask.Row{subtask.Int(k)}}
}

func keys(ks ...int64) []subtask.Key {
	out := make([]subtask.Key, len(ks))
	for i, k := range ks {
		out[i] = key(k)
	}
	return out
}

func row(vs ...int64) subtask.Row {
	r := make(subtask.Row, len(vs))
	for i, v := range vs {
		r[i] = subtask.Int(v)
	}
	return r
}

var bigintKey = []subtask.Column{{Name: "k", Type: table.BigInt().NotNull()}}

func aggLayout(ttl int64) subtask.Layout {
	return subtask.Layout{
		Name:  "agg",
		Key:   bigintKey,
		Value: []subtask.Column{{Name: "sum", Type: table.BigInt()}, {Name: "cnt", Type: table.BigInt()}},
		TTL:   ttl,
	}
}

// harness drives one store through flushes and restores.
type harness struct {
	t       *testing.T
	bc      backendCase
	backend subtask.Backend
	store   *subtask.Store
	setup   func(s *subtask.Store)
	nextID  int64
}

func newHarness(t *testing.T, bc backendCase, setup func(s *subtask.Store)) *harness {
	h := &harness{t: t, bc: bc, backend: bc.fresh(t), setup: setup}
	h.open()
	t.Cleanup(func() { h.backend.Close() })
	return h
}

func (h *harness) open() {
	now := int64(0)
	if h.store != nil {
		now = h.store.Now()
	}
	h.store = subtask.NewStore(h.backend)
	h.store.SetNow(now)
	h.setup(h.store)
}

func (h *harness) flush() subtask.Checkpoint {
	h.t.Helper()
	h.nextID++
	cp, err := h.store.Flush(h.nextID)
	if err != nil {
		h.t.Fatal(err)
	}
	return cp
}

// restore flushes a checkpoint and reopens the store from it.
func (h *harness) restore() subtask.Checkpoint {
	h.t.Helper()
	cp := h.flush()
	h.backend = h.bc.restore(h.t, h.backend, cp)
	h.open()
	return cp
}

func must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}
