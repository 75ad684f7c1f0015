package barrier

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lakestate/lakestate/actors"
	"github.com/lakestate/lakestate/compaction"
	"github.com/lakestate/lakestate/keygroup"
	"github.com/lakestate/lakestate/subtask"
	"github.com/lakestate/lakestate/table"
)

// discardBlobs is a BlobStore that keeps nothing: the benchmark measures
// the sync phase and counts what the upload would put.
type discardBlobs struct{}

func (discardBlobs) Put(_ context.Context, _ string, r io.Reader) error {
	_, err := io.Copy(io.Discard, r)
	return err
}
func (discardBlobs) Get(context.Context, string) (io.ReadCloser, error) {
	return nil, NotFoundError("get", "")
}
func (discardBlobs) Stat(_ context.Context, name string) (BlobInfo, error) {
	return BlobInfo{}, NotFoundError("stat", name)
}
func (discardBlobs) Delete(context.Context, string) error             { return nil }
func (discardBlobs) List(context.Context, string) ([]BlobInfo, error) { return nil, nil }

// spawnPaimonStoreActor spawns a Store actor for a paimon store whose work
// directory is under dir, with an Uploader into discardBlobs and probes in
// the places of the coordinator (Acks) and of the task (SyncDones), each
// waiting up to wait for a message.
func spawnPaimonStoreActor(tb testing.TB, sys *actors.System, fio table.FileIO, dir, operator string, wait time.Duration) (pid *actor.PID, coord, syncs *actors.Probe) {
	tb.Helper()
	probe := func(name string) *actors.Probe {
		p, err := actors.NewProbe(sys, name)
		if err != nil {
			tb.Fatal(err)
		}
		p.SetWait(wait)
		return p
	}
	coord, syncs = probe("coord"), probe("syncs")
	uploader, err := sys.Spawn("uploader", NewUploader(sys, UploaderConfig{Blobs: discardBlobs{}, FileIO: fio}))
	if err != nil {
		tb.Fatal(err)
	}
	h, _ := NewHistory(operator)
	pid, err = sys.Spawn("store", NewStoreActor(sys, StoreConfig{
		Operator: operator, KeyGroups: keygroup.Range{Start: 0, End: 127}, WorkDir: filepath.Join(dir, "work"), FileIO: fio,
		Uploader: uploader, Coordinator: coord.PID(), History: h,
		Maintenance: compaction.Config{RetainSnapshots: 3},
	}))
	if err != nil {
		tb.Fatal(err)
	}
	return pid, coord, syncs
}

// BenchmarkBarrierSyncPaimon is BenchmarkBarrierSync for the paimon backend,
// whose sync phase runs through actors: the release of the previous
// checkpoint's frozen flush and the freeze of the write buffers, from
// Barrier to SyncDone (the commit, each table's maintenance round and
// listing, the reuse decision and the links follow it, untimed). Every
// checkpoint completes (the reuse base moves); maintenance shapes the table
// between barriers as it would in a job.
func BenchmarkBarrierSyncPaimon(b *testing.B) {
	sizes := []int64{1_000_000, 10_000_000}
	if testing.Short() {
		sizes = []int64{100_000, 1_000_000}
	}
	const delta = 10_000
	for _, rows := range sizes {
		b.Run(fmt.Sprintf("%s/rows=%d", BackendPaimon, rows), func(b *testing.B) {
			dir := b.TempDir()
			fio := table.NewLocalFileIO()
			sys := actors.NewSystem(actors.Options{})
			defer sys.Close()
			pb, err := subtask.OpenPaimon(filepath.Join(dir, "paimon"), subtask.PaimonOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer pb.Close()
			store := subtask.NewStore(pb)
			v, err := store.Value(benchLayout)
			if err != nil {
				b.Fatal(err)
			}
			pid, coord, syncs := spawnPaimonStoreActor(b, sys, fio, dir, "bench", 10*time.Minute) // a 1M-row load on a busy machine
			defer sys.Stop(pid)
			id := CheckpointID(0)
			var prev map[fileSlot]int64
			// checkpoint takes one checkpoint end to end and returns the
			// bytes it uploaded and the bytes of its files that the
			// previous checkpoint did not have.
			checkpoint := func(timed bool) (int64, int64) {
				id++
				if timed {
					b.StartTimer()
				}
				sys.Send(pid, &Barrier{ID: id, Kind: KindCheckpoint, Store: store, ReplyTo: syncs.PID()})
				sd, err := actors.Expect[*SyncDone](syncs)
				if timed {
					b.StopTimer()
				}
				if err != nil || sd.Err != nil {
					b.Fatalf("checkpoint %d: %v %v", id, err, sd)
				}
				ack, err := actors.Expect[*Ack](coord)
				if err != nil {
					b.Fatal(err)
				}
				sys.Send(pid, &Complete{ID: id, Kind: KindCheckpoint})
				cur := map[fileSlot]int64{}
				var uploaded, created int64
				for _, t := range ack.State.Tables {
					for _, f := range t.Files {
						slot := fileSlot{t.Name, f.Path}
						cur[slot] = f.Size
						if _, ok := prev[slot]; !ok {
							created += f.Size
						}
						if f.Uploaded {
							uploaded += f.Size
						}
					}
				}
				prev = cur
				return uploaded, created
			}
			b.StopTimer()
			for at := int64(0); at < rows; at += 1_000_000 {
				benchPut(v, at, min(1_000_000, rows-at), 0)
				checkpoint(false)
			}
			b.ResetTimer()
			var uploaded, created int64
			for i := 0; i < b.N; i++ {
				benchPut(v, int64(i*delta)%rows, delta, int64(i+1))
				u, c := checkpoint(true)
				uploaded += u
				created += c
			}
			if created > 0 {
				b.ReportMetric(float64(uploaded)/float64(created), "uploaded/created")
			}
			b.ReportMetric(float64(uploaded)/float64(b.N), "upload-B/op")
		})
	}
}
