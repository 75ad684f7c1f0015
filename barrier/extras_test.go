package barrier_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/barrier"
)

// pieceLog records the puts of extra pieces.
type pieceLog struct {
	mu   sync.Mutex
	puts []string
}

func watchPieces(blobs *memBlobs) *pieceLog {
	l := &pieceLog{}
	blobs.inject(&blobFault{op: "put", match: func(name string) bool {
		if strings.Contains(name, "/"+barrier.ExtrasTable+"/") {
			l.mu.Lock()
			l.puts = append(l.puts, name)
			l.mu.Unlock()
		}
		return false
	}})
	return l
}

func (l *pieceLog) taken() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.puts
	l.puts = nil
	return out
}

// piece is the content of a test piece: its name, repeated.
func piece(name string) barrier.ExtraPiece {
	b := []byte(strings.Repeat(name, 10000))
	return barrier.ExtraPiece{Owner: "sink", Name: name, Data: [][]byte{b[:7], b[7:]}}
}

// checkpointWith takes checkpoint id end to end; every task hands over the
// given pieces behind a one-byte head.
func (j *job) checkpointWith(pieces ...barrier.ExtraPiece) outcome {
	j.t.Helper()
	id := j.trigger(barrier.KindCheckpoint)
	for _, tk := range j.tasks {
		j.sys.Send(tk.relay, &barrier.Barrier{ID: id, Kind: barrier.KindCheckpoint, Store: tk.store, ReplyTo: tk.syncs.PID(),
			Extras: map[string]barrier.Extra{"sink": {{byte(len(pieces))}}}, Pieces: pieces})
	}
	for i, tk := range j.tasks {
		sd, err := actors.Expect[*barrier.SyncDone](tk.syncs)
		if err != nil || sd.ID != id {
			j.t.Fatalf("task %d: sync done %+v during %d: %v", i, sd, id, err)
		}
	}
	err, blob := j.await(id)
	return outcome{id: id, err: err, blob: blob}
}

// wantExtras checks that subtask i's extras in m read back as the head and
// the pieces.
func (j *job) wantExtras(m *barrier.Metadata, pieces ...barrier.ExtraPiece) {
	j.t.Helper()
	op, _ := m.Operator(opID)
	for i := range op.Subtasks {
		want := []byte{byte(len(pieces))}
		for _, p := range pieces {
			want = append(want, bytes.Join(p.Data, nil)...)
		}
		got, err := barrier.ReadExtras(context.Background(), j.blobs, &op.Subtasks[i], "sink")
		if err != nil {
			j.t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			j.t.Fatalf("checkpoint %d subtask %d: extras read back as %d bytes, want %d", m.ID, i, len(got), len(want))
		}
	}
}

// A piece that several checkpoints hold is put once, named by each of
// their metadata files, and deleted once no retained checkpoint holds it;
// the metadata files stay small however large the pieces are.
func TestExtraPiecesArePutOnceAndReleased(t *testing.T) {
	blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
	j := startJob(t, blobs, fs, root, jobConfig{backend: barrier.BackendMemory, parallelism: 2, retain: 1})
	puts := watchPieces(blobs)
	a, b, c := piece("a"), piece("b"), piece("c")
	steps := [][]barrier.ExtraPiece{{a}, {a, b}, {a, b}, {b, c}, nil}
	putBy := map[string]barrier.CheckpointID{"a": 1, "b": 2, "c": 4}
	for _, pieces := range steps {
		o := j.checkpointWith(pieces...)
		if o.err != nil {
			t.Fatalf("checkpoint %d: %v", o.id, o.err)
		}
		var got, want []string
		for _, name := range puts.taken() {
			got = append(got, name[strings.LastIndex(name, "/")+1:])
		}
		for _, p := range pieces {
			if putBy[p.Name] == o.id {
				want = append(want, p.Name, p.Name) // one per subtask
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("checkpoint %d put pieces %v, want %v", o.id, got, want)
		}
		m := j.metadata(o)
		j.wantExtras(m, pieces...)
		op, _ := m.Operator(opID)
		for _, st := range op.Subtasks {
			if len(st.ExtraFiles) != len(pieces) {
				t.Fatalf("checkpoint %d subtask %d: %d extra files, want %d", o.id, st.Index, len(st.ExtraFiles), len(pieces))
			}
			for _, f := range st.ExtraFiles {
				by := putBy[f.Path]
				if want := fmt.Sprintf("shared/chk-%d/%s/", by, st.BackendID); !strings.HasPrefix(f.Blob, want) || f.Uploaded != (by == o.id) {
					t.Fatalf("checkpoint %d subtask %d: piece %s in %s (uploaded %v), want the upload of checkpoint %d", o.id, st.Index, f.Path, f.Blob, f.Uploaded, by)
				}
			}
		}
		rc, err := blobs.Get(context.Background(), o.blob)
		if err != nil {
			t.Fatal(err)
		}
		var data bytes.Buffer
		if _, err := data.ReadFrom(rc); err != nil {
			t.Fatal(err)
		}
		if data.Len() > 4096 {
			t.Fatalf("checkpoint %d: metadata of %d bytes holds the pieces", o.id, data.Len())
		}
		j.checkNoLeaks()
	}
	for _, name := range blobs.names() {
		if strings.Contains(name, "/"+barrier.ExtrasTable+"/") {
			t.Fatalf("piece %s remains, which nothing holds", name)
		}
	}
}

// A checkpoint aborted after a subtask acknowledged its pieces releases
// them. A store that heard of the abort uploads them again; one whose
// notification was lost references them, that checkpoint fails, and the
// one after it uploads them again. Nothing is lost or leaked.
func TestExtraPiecesAfterAnAbort(t *testing.T) {
	for _, lost := range []bool{false, true} {
		t.Run(fmt.Sprintf("lost=%v", lost), func(t *testing.T) {
			blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
			j := startJob(t, blobs, fs, root, jobConfig{backend: barrier.BackendMemory, parallelism: 2, retain: 1})
			a, b := piece("a"), piece("b")
			o := j.checkpointWith(a)
			if o.err != nil {
				t.Fatal(o.err)
			}
			op, _ := j.metadata(o).Operator(opID)
			// Subtask 1's upload of piece b fails for good: checkpoint 2
			// aborts, and subtask 0 acknowledged its own.
			f := blobs.inject(&blobFault{op: "put", match: func(n string) bool {
				return n == "shared/chk-2/"+op.Subtasks[1].BackendID+"/_extras/sink/b"
			}, times: 1})
			j.tasks[0].deaf.Store(lost)
			if o := j.checkpointWith(a, b); o.err == nil || f.hits != 1 {
				t.Fatalf("checkpoint 2 completed despite a failed upload (%d hits)", f.hits)
			}
			j.settle()
			j.tasks[0].deaf.Store(false)
			o = j.checkpointWith(a, b)
			if lost {
				if o.err == nil || !errors.Is(o.err, barrier.ErrUnknownSharedFile) && !strings.Contains(o.err.Error(), "unknown shared file") {
					t.Fatalf("checkpoint %d after a lost abort: %v, want it to fail on the released piece", o.id, o.err)
				}
				o = j.checkpointWith(a, b)
			}
			if o.err != nil {
				t.Fatalf("checkpoint %d: %v", o.id, o.err)
			}
			j.wantExtras(j.metadata(o), a, b)
			j.checkNoLeaks()
		})
	}
}

// Checkpoints over a sliding window of pieces (a sink's pending
// transactions) with failed piece uploads and lost notifications: every
// completed checkpoint's extras read back whole, and once the faults stop
// a checkpoint completes at the latest on its second attempt and nothing
// is leaked.
func TestExtraPiecesUnderFaults(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := mrand.New(mrand.NewPCG(seed, 0xe7a5))
			blobs, fs, root := newMemBlobs(), newFaultyFS(), t.TempDir()
			j := startJob(t, blobs, fs, root, jobConfig{backend: barrier.BackendMemory, parallelism: 2, retain: 1 + rng.IntN(2)})
			var window []barrier.ExtraPiece
			next := 0
			for round := range 20 {
				for range rng.IntN(3) {
					next++
					window = append(window, piece(fmt.Sprintf("t%d", next)))
				}
				if drop := rng.IntN(4); drop > 0 && round > 0 {
					window = window[min(drop-1, len(window)):]
				}
				blobs.clearFaults()
				if len(window) > 0 && rng.IntN(2) == 0 {
					victim := window[rng.IntN(len(window))].Name
					blobs.inject(&blobFault{op: "put", times: 1, match: func(n string) bool { return strings.HasSuffix(n, "/"+victim) }})
				}
				for _, tk := range j.tasks {
					tk.deaf.Store(rng.IntN(3) == 0)
				}
				if o := j.checkpointWith(window...); o.err == nil {
					j.wantExtras(j.metadata(o), window...)
				}
				j.settle()
			}
			blobs.clearFaults()
			for _, tk := range j.tasks {
				tk.deaf.Store(false)
			}
			o := j.checkpointWith(window...)
			if o.err != nil {
				// A store that missed an abort references a released piece
				// once; that failure's notification it hears.
				if o = j.checkpointWith(window...); o.err != nil {
					t.Fatalf("checkpoint %d after the faults: %v", o.id, o.err)
				}
			}
			j.wantExtras(j.metadata(o), window...)
			j.checkNoLeaks()
		})
	}
}
