package table

import (
	"fmt"
	"math/rand/v2"
	"path"
	"sync/atomic"
	"testing"
)

// meteredFileIO counts the bytes the table reads and writes and skips
// fsync, so a benchmark measures metadata work rather than the disk's
// flush latency (a constant per commit).
type meteredFileIO struct {
	FileIO
	read, written atomic.Int64
}

type meteredFile struct {
	WritableFile
	m *meteredFileIO
}

func (f meteredFile) Write(p []byte) (int, error) {
	f.m.written.Add(int64(len(p)))
	return f.WritableFile.Write(p)
}

func (f meteredFile) Sync() error { return nil }

func (m *meteredFileIO) ReadFile(p string) ([]byte, error) {
	b, err := m.FileIO.ReadFile(p)
	m.read.Add(int64(len(b)))
	return b, err
}

func (m *meteredFileIO) Create(p string) (WritableFile, error) {
	f, err := m.FileIO.Create(p)
	if err != nil {
		return nil, err
	}
	return meteredFile{WritableFile: f, m: m}, nil
}

func (m *meteredFileIO) SyncDir(string) error { return nil }

// benchWorkload drives a state table's commit pattern: every step appends
// one level-0 file to a bucket; every fourth step compacts that bucket's
// level-0 files and its level-5 file into a new level-5 file, so the live
// set stays bounded while the history grows.
type benchWorkload struct {
	tbl  *Table
	step int64
	l0   [2][]ManifestEntry
	l5   [2]*ManifestEntry
}

func (w *benchWorkload) file(b testing.TB, bucket, level int32) ManifestEntry {
	name := w.tbl.NewDataFileName()
	dir, _ := w.tbl.BucketDir(nil, bucket)
	f, err := w.tbl.fio.Create(path.Join(dir, name))
	if err != nil {
		b.Fatal(err)
	}
	f.Close()
	key := commitTestKey(int32(w.step), "k")
	return ManifestEntry{Bucket: bucket, File: DataFileMeta{
		FileName: name, FileSize: 1 << 20, RowCount: 1000, MinKey: key, MaxKey: key,
		KeyStats: SimpleStats{MinValues: key, MaxValues: key, NullCounts: []*int64{metaI64(0), metaI64(0)}},
		Level:    level, ExtraFiles: []string{}, MinSequenceNumber: w.step * 1000, MaxSequenceNumber: w.step*1000 + 999,
	}}
}

func (w *benchWorkload) commit(b testing.TB) {
	w.step++
	bucket := int32(w.step % 2)
	f := w.file(b, bucket, 0)
	if _, err := w.tbl.CommitAppend([]ManifestEntry{f}, CommitInfo{User: "writer", Identifier: w.step, TimeMillis: w.step}); err != nil {
		b.Fatal(err)
	}
	w.l0[bucket] = append(w.l0[bucket], f)
	if w.step%4 != 0 {
		return
	}
	out := w.file(b, bucket, 5)
	out.File.MinKey, out.File.MaxKey = commitTestKey(0, ""), commitTestKey(1<<30, "")
	ch := CompactChange{Deleted: w.l0[bucket], Added: []ManifestEntry{out}}
	if w.l5[bucket] != nil {
		ch.Deleted = append(ch.Deleted, *w.l5[bucket])
	}
	if _, err := w.tbl.CommitCompact(ch, CommitInfo{User: "compactor", Identifier: w.step, TimeMillis: w.step}); err != nil {
		b.Fatal(err)
	}
	w.l0[bucket], w.l5[bucket] = nil, &out
}

// BenchmarkCommitMetadata measures one commit step (an APPEND, plus a
// COMPACT every fourth step) on a table that already has 10, 100 or 1000
// commits, with manifest merging as configured by default and with merging
// disabled for comparison. Run with a fixed count (-benchtime=100x) so the
// table's age during the measurement stays near the label. Reported per
// step: metadata bytes read and written, and the manifests of the newest
// snapshot.
func BenchmarkCommitMetadata(b *testing.B) {
	for _, merging := range []bool{true, false} {
		for _, age := range []int{10, 100, 1000} {
			name := fmt.Sprintf("merge=%v/commits=%d", merging, age)
			b.Run(name, func(b *testing.B) {
				opts := map[string]string{OptionBucket: "2"}
				if !merging {
					opts[OptionManifestMergeMinCount] = "1000000"
					opts[OptionManifestFullCompaction] = "1 tb"
				}
				fio := &meteredFileIO{FileIO: NewLocalFileIO()}
				tbl, err := Create(fio, b.TempDir(), commitTestSchema(opts), WithRand(rand.NewChaCha8([32]byte{7})))
				if err != nil {
					b.Fatal(err)
				}
				w := &benchWorkload{tbl: tbl}
				for w.step < int64(age) {
					w.commit(b)
				}
				read0, written0 := fio.read.Load(), fio.written.Load()
				steps := 0
				for b.Loop() {
					w.commit(b)
					steps++
				}
				b.ReportMetric(float64(fio.read.Load()-read0)/float64(steps), "readB/op")
				b.ReportMetric(float64(fio.written.Load()-written0)/float64(steps), "writtenB/op")
				latest, _, _ := tbl.LatestSnapshotID()
				b.ReportMetric(float64(len(manifestsOf(b, tbl, latest))), "manifests")
			})
		}
	}
}
